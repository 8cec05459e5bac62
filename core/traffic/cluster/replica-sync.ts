/**
 * What a replica shares with the others through Consul KV, by role (see
 * replica-gate.ts for what each role answers):
 *
 * - A follower copies the leader's route table (RouteFollower) and reports
 *   its own load (LoadReporter): requests queued and in flight per unit and
 *   instance, so the leader's autoscaler scales for the whole cluster.
 * - The leader, once it has restored its deployments, publishes its routes
 *   (RoutePublisher, which also deletes a previous leader's) and reads the
 *   followers' reports (PeerLoad).
 *
 * A follower that wins the election keeps serving the routes it copied while
 * it restores (`add()` evicts them one by one), so a failover does not stop
 * the traffic; the copies still left are dropped once its own are published.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { DeploymentRef } from '../../model/deployment-keys.js';
import type { Admission } from '../gateway/admission.js';
import type { RouteTable } from '../gateway/route-table.js';
import type { ServiceRegistry } from '../../infra/registry/types.js';
import type { StateStore } from '../../model/store/types.js';
import type { PeerLoadView } from '../../services/autoscale/types.js';
import { LoadReporter } from './load-report.js';
import { PeerLoad } from './peer-load.js';
import { RouteFollower, RoutePublisher } from './route-sync.js';

export interface ReplicaSyncOptions {
  readonly store: StateStore;
  readonly routes: RouteTable;
  readonly admission: Admission;
  readonly registry: ServiceRegistry;
  /** Has the leader's autoscaler evaluate these units now (followers' load changed). */
  evaluate(units: readonly string[]): void;
  report(error: unknown): void;
}

const IDLE_PEERS: PeerLoadView = { load: () => ({ inFlight: 0, queued: 0 }), use: () => ({ inFlight: 0, lastActiveAt: undefined }) };

export class ReplicaSync {
  /** This replica's name in the load reports: unique among the replicas, readable in `consul kv get`. */
  readonly replicaId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  readonly #options: ReplicaSyncOptions;
  #follower: RouteFollower | null = null;
  #reporter: LoadReporter | null = null;
  #publisher: RoutePublisher | null = null;
  #peers: PeerLoad | null = null;
  /** It won the election with the leader's routes copied: they serve while it restores its own. */
  #tookOverWithCopy = false;

  constructor(options: ReplicaSyncOptions) {
    this.#options = options;
  }

  /** The followers' load, for the leader's autoscaler (nothing while this replica does not lead). */
  readonly peers: PeerLoadView = {
    load: (unit) => (this.#peers ?? IDLE_PEERS).load(unit),
    use: (instanceId) => (this.#peers ?? IDLE_PEERS).use(instanceId),
  };

  /** Starts following: copies the leader's routes, reports this replica's load. */
  follow(): void {
    const { store, routes, admission, registry, report } = this.#options;
    this.#follower = new RouteFollower({
      store,
      routes,
      report,
      // Watch the units' instances in Consul now, not when the first request finds none.
      onApplied: (followed) => {
        for (const route of followed) registry.instances(route.entry.unit);
      },
    });
    void this.#follower.start().catch(() => {}); // rejects only when closed first
    this.#reporter = new LoadReporter({
      store,
      replicaId: this.replicaId,
      admission,
      registry,
      units: () => followedUnits(routes),
      report,
    });
  }

  /** True once a follower has loaded the leader's routes. */
  synced(): boolean {
    return this.#follower?.synced() ?? false;
  }

  /**
   * The unit the copied routes send a workload's requests to (the old leader's), for the restore
   * to adopt: its job stays as it runs. Undefined when no copy names one.
   */
  copiedUnit(ref: DeploymentRef, workload: string): string | undefined {
    return this.#options.routes
      .entries()
      .find(
        (entry) =>
          entry.workload.name === workload &&
          entry.ref.workspace === ref.workspace &&
          entry.ref.app === ref.app &&
          entry.ref.stage === ref.stage,
      )?.unit;
  }

  /**
   * True while a copy of the leader's routes serves here: a follower's synced copy, kept through the
   * election it wins (before stopFollowing() even ran) and the restore that follows. /_svc/ready asks
   * it only while this replica is starting.
   */
  tookOverWithCopy(): boolean {
    return this.#tookOverWithCopy || this.synced();
  }

  /** A request queued (or, `refused`, could not wait) for `unit` on this follower: tell the leader soon. */
  notice(unit: string, refused: boolean): void {
    this.#reporter?.notice(unit, refused);
  }

  /** Stops following (this replica won the election); the copied routes keep serving until `lead()`. */
  async stopFollowing(): Promise<void> {
    this.#tookOverWithCopy ||= this.synced();
    const follower = this.#follower;
    const reporter = this.#reporter;
    this.#follower = null;
    this.#reporter = null;
    await follower?.close();
    await reporter?.close();
  }

  /** After the restore: publishes this replica's routes, drops the copies, reads the followers' load. */
  async lead(signal: AbortSignal): Promise<void> {
    const { store, routes, evaluate, report } = this.#options;
    await this.stopFollowing();
    signal.throwIfAborted();
    this.#publisher = new RoutePublisher({ store, routes, report });
    await this.#publisher.start();
    signal.throwIfAborted();
    routes.dropFollowed();
    this.#peers = new PeerLoad({ store, self: this.replicaId, report, onChange: evaluate });
    await this.#peers.start();
    signal.throwIfAborted(); // demoted meanwhile: the take-over stops here (no purge)
  }

  /** Stops publishing and reading the load (leadership lost or svc stopping); the next leader takes over. */
  async letGo(): Promise<void> {
    const publisher = this.#publisher;
    const peers = this.#peers;
    this.#publisher = null;
    this.#peers = null;
    await publisher?.close();
    await peers?.close();
  }

  async close(): Promise<void> {
    await this.stopFollowing();
    await this.letGo();
  }
}

/** The units of the routes copied from the leader (the ones this follower serves). */
function followedUnits(routes: RouteTable): string[] {
  return routes
    .entries()
    .filter((entry) => entry.offline === undefined)
    .map((entry) => entry.unit);
}
