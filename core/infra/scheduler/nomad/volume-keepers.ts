/**
 * The keepers of CSI volumes (jobs/volume-keeper.ts): one Nomad job per volume, registered the first
 * time svc needs the volume's files and kept running, so that later calls find it at once. Its token
 * is a random one svc writes into the job's Nomad Variable before registering it (a replica that
 * finds the Variable reads it back: every replica sends the same token). The keeper's address is read
 * from its running allocation; one that stopped answering is looked for again (Nomad reschedules it).
 */
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterSettings } from '../../../../jobs/context.js';
import { keeperJobId } from '../../../../jobs/names.js';
import { secretsVariablePath } from '../../../../jobs/secrets-template.js';
import { formatIssues, validateJob } from '../../../../jobs/validate.js';
import type { NomadJobRegistration } from '../../../../jobs/types.js';
import {
  compileKeeperJob,
  KEEPER_PORT_LABEL,
  KEEPER_SPEC_META_KEY,
  KEEPER_TASK,
  KEEPER_TOKEN_ITEM,
} from '../../../../jobs/volume-keeper.js';
import { SvcError } from '../../../model/errors.js';
import type { KeeperAddress, KeeperFinder } from '../../volumes/keeper-client.js';
import type { NomadClient } from './client.js';
import { type CsiVolumeOptions, ensureCsiVolume } from './csi-volumes.js';
import { jobPath } from './driver-state.js';
import { failedPlacement, type NomadEvaluation } from './plan.js';
import type { Allocation, AllocationStub } from './types.js';

type Client = Pick<NomadClient, 'get' | 'put' | 'delete' | 'namespace'>;

export interface VolumeKeepersOptions {
  readonly client: Client;
  /** The plugin the volumes are created with (one made before the operator named it is created on first use). */
  readonly csi: CsiVolumeOptions;
  /** The cluster's settings, its driver `exec` or `docker` (raw_exec cannot mount volumes). */
  readonly cluster: Omit<ClusterSettings, 'python'> & { readonly driver: 'exec' | 'docker' };
  /** The interpreter (exec) or image (docker) with svc's runtime that keepers run: built once, when first needed. */
  readonly runtime: () => Promise<{ readonly python: string; readonly image: string | null }>;
  /** The installation the jobs belong to (`svc_install`). */
  readonly install?: string | undefined;
}

/** How long a keeper may take to be placed, mount its volume and answer. */
const START_TIMEOUT_MS = 120_000;
const POLL_MS = 250;
/** Polls between two reads of the keeper job's evaluations (a second). */
const EVALUATION_POLLS = 4;

const variablePath = (jobId: string) => `/v1/var/${secretsVariablePath(jobId)}`;

export class VolumeKeepers implements KeeperFinder {
  readonly #options: VolumeKeepersOptions;
  /** Keepers found (or being started), by `<workspace>/<volume>`. */
  readonly #known = new Map<string, Promise<KeeperAddress>>();
  /** Deletions under way (`deleting`), by `<workspace>/<volume>`: how many. */
  readonly #deleting = new Map<string, number>();

  constructor(options: VolumeKeepersOptions) {
    this.#options = options;
  }

  find(workspace: string, volume: string): Promise<KeeperAddress> {
    const key = `${workspace}/${volume}`;
    // A volume being deleted gets no keeper again (a size read for /metrics meanwhile would claim it anew).
    if (this.#deleting.has(key)) return Promise.reject(beingDeleted(volume));
    let found = this.#known.get(key);
    if (found === undefined) {
      found = this.#start(workspace, volume);
      this.#known.set(key, found);
      found.catch(() => this.#known.delete(key)); // a failed start is tried again by the next call
    }
    return found;
  }

  forget(workspace: string, volume: string): void {
    this.#known.delete(`${workspace}/${volume}`);
  }

  /**
   * Deletes the volume's keeper, then runs `removeVolume` (the CSI volume's deletion, which needs the
   * keeper's claim gone). No keeper of the volume is started from this call until it ends, done or failed,
   * nor while another deletion of it runs.
   */
  async deleting(workspace: string, volume: string, removeVolume: () => Promise<void>): Promise<void> {
    const key = `${workspace}/${volume}`;
    this.#deleting.set(key, (this.#deleting.get(key) ?? 0) + 1);
    try {
      await this.#stop(workspace, volume);
      await removeVolume();
    } finally {
      const left = this.#deleting.get(key)! - 1;
      if (left === 0) this.#deleting.delete(key);
      else this.#deleting.set(key, left);
    }
  }

  /** Stops and purges the keeper's job and its Variable, and waits until its allocations are gone (their claims with them). */
  async #stop(workspace: string, volume: string): Promise<void> {
    // One being started now is waited for, so that its job is registered before it is purged below.
    await this.#known.get(`${workspace}/${volume}`)?.catch(() => undefined);
    this.forget(workspace, volume);
    const id = keeperJobId(workspace, volume);
    const { client } = this.#options;
    await ignoreMissing(client.delete(jobPath(id), { purge: true }));
    await ignoreMissing(client.delete(variablePath(id)));
    const deadline = Date.now() + START_TIMEOUT_MS;
    while ((await this.#allocations(id)).some((alloc) => !['complete', 'failed', 'lost'].includes(alloc.ClientStatus))) {
      if (Date.now() > deadline) break; // the volume's deletion says what still claims it
      await sleep(POLL_MS);
    }
  }

  async #start(workspace: string, volume: string): Promise<KeeperAddress> {
    const id = keeperJobId(workspace, volume);
    await ensureCsiVolume(this.#options.client, this.#options.csi, workspace, volume);
    const token = await this.#token(id);
    const body = await this.#compile(workspace, volume);
    // A job that runs as svc would register it now is kept; one missing, stopped, or of an older svc
    // (another interpreter, image or argument) is registered anew.
    const registered = await this.#registered(id);
    let since = registered?.modifyIndex ?? 0;
    if (registered?.spec !== body.Job.Meta?.[KEEPER_SPEC_META_KEY]) {
      since = (await this.#options.client.put<{ JobModifyIndex?: number }>('/v1/jobs', body)).body.JobModifyIndex ?? 0;
    }
    const url = await this.#address(id, `${workspace}/${volume}`, since);
    await this.#healthy(url, id);
    return { url, token };
  }

  /** The keeper's token: the one in its Variable, or a new one written there (the first writer wins). */
  async #token(id: string): Promise<string> {
    const { client } = this.#options;
    const stored = await this.#storedToken(id);
    if (stored !== null) return stored;
    const fresh = randomBytes(32).toString('hex');
    try {
      await client.put(variablePath(id), { Path: secretsVariablePath(id), Items: { [KEEPER_TOKEN_ITEM]: fresh } }, { cas: 0 });
      return fresh;
    } catch (error) {
      // Another replica wrote one first (Nomad refuses the check-and-set): read it back.
      const written = await this.#storedToken(id);
      if (written !== null) return written;
      throw error;
    }
  }

  async #storedToken(id: string): Promise<string | null> {
    try {
      const answer = await this.#options.client.get<{ Items?: Record<string, string> }>(variablePath(id));
      return answer.body.Items?.[KEEPER_TOKEN_ITEM] ?? null;
    } catch (error) {
      if (error instanceof SvcError && error.code === 'not_found') return null;
      throw error;
    }
  }

  /** The spec hash of the keeper job Nomad runs, and the index it was registered at; null when none runs. */
  async #registered(id: string): Promise<{ spec: string | null; modifyIndex: number } | null> {
    try {
      const job = (
        await this.#options.client.get<{ Stop?: boolean; Status?: string; JobModifyIndex?: number; Meta?: Record<string, string> | null }>(
          jobPath(id),
        )
      ).body;
      if (job.Stop === true || job.Status === 'dead') return null;
      return { spec: job.Meta?.[KEEPER_SPEC_META_KEY] ?? null, modifyIndex: job.JobModifyIndex ?? 0 };
    } catch (error) {
      if (error instanceof SvcError && error.code === 'not_found') return null;
      throw error;
    }
  }

  /** The keeper's job as this svc registers it, checked by the strict validator, its spec hash in its Meta. */
  async #compile(workspace: string, volume: string): Promise<NomadJobRegistration> {
    const { cluster, install } = this.#options;
    const runtime = await this.#options.runtime();
    const body = compileKeeperJob({ workspace, volume, cluster: { ...cluster, python: runtime.python }, image: runtime.image, install });
    const issues = validateJob(body);
    if (issues.length > 0) {
      throw new SvcError(
        'internal',
        `the keeper job of the volume ${volume} breaks ${issues.length} job rule(s):\n${formatIssues(issues)}`,
      );
    }
    const spec = createHash('sha256').update(JSON.stringify(body.Job)).digest('hex').slice(0, 16);
    return { ...body, Job: { ...body.Job, Meta: { ...body.Job.Meta, [KEEPER_SPEC_META_KEY]: spec } } };
  }

  /**
   * `http://host:port` of the keeper's running allocation, waited for; one Nomad cannot place (no eligible
   * node with room, in an evaluation since the job's registration at `since`) fails at once, saying why.
   */
  async #address(id: string, name: string, since: number): Promise<string> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let last: AllocationStub | undefined;
    let polls = 0;
    for (;;) {
      const allocations = await this.#allocations(id);
      last = allocations.at(-1) ?? last;
      const running = allocations.find((alloc) => alloc.DesiredStatus === 'run' && alloc.TaskStates?.[KEEPER_TASK]?.State === 'running');
      if (running !== undefined) {
        const alloc = (await this.#options.client.get<Allocation>(`/v1/allocation/${encodeURIComponent(running.ID)}`)).body;
        const port = alloc.AllocatedResources?.Shared.Ports?.find((p) => p.Label === KEEPER_PORT_LABEL);
        if (port !== undefined) return `http://${port.HostIP.includes(':') ? `[${port.HostIP}]` : port.HostIP}:${port.Value}`;
      }
      const placed = allocations.some((alloc) => alloc.DesiredStatus === 'run' && ['pending', 'running'].includes(alloc.ClientStatus));
      // Read once a second, not at every poll.
      const unplaced = placed || since <= 0 || ++polls % EVALUATION_POLLS !== 1 ? null : await this.#placementFailure(id, since);
      if (unplaced !== null) throw notPlaced(name, id, unplaced);
      if (Date.now() > deadline) throw notStarted(name, id, last);
      await sleep(POLL_MS);
    }
  }

  /**
   * Why Nomad cannot place the keeper now, or null: while it holds a blocked evaluation (waiting for room),
   * the newest failure since index `since`. An old failure Nomad got past (its blocked evaluation placed
   * the keeper later) says nothing of now: a keeper between a failure and its reschedule is waited for.
   */
  async #placementFailure(id: string, since: number): Promise<string | null> {
    const evaluations =
      (await this.#options.client.get<NomadEvaluation[] | null>(`${jobPath(id)}/evaluations`).catch(() => null))?.body ?? [];
    if (!evaluations.some((evaluation) => evaluation.Status === 'blocked')) return null;
    return failedPlacement(evaluations, KEEPER_TASK, since);
  }

  /** Waits until the keeper's server answers (its task runs a moment before it listens). */
  async #healthy(url: string, id: string): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      try {
        if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) })).ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw notStarted(id, id, undefined);
      await sleep(POLL_MS);
    }
  }

  async #allocations(id: string): Promise<AllocationStub[]> {
    try {
      const list = (await this.#options.client.get<AllocationStub[] | null>(`${jobPath(id)}/allocations`)).body ?? [];
      return list.sort((a, b) => a.CreateIndex - b.CreateIndex);
    } catch (error) {
      if (error instanceof SvcError && error.code === 'not_found') return [];
      throw error;
    }
  }
}

function beingDeleted(volume: string): SvcError {
  return new SvcError('conflict', `the volume ${volume} is being deleted.`, {
    hint: 'Wait for the delete to end; svc volume list shows whether it is still there.',
  });
}

function notPlaced(name: string, id: string, reason: string): SvcError {
  return new SvcError('container_failed', `Nomad cannot place the keeper of the volume ${name} (job ${id}): ${reason}.`, {
    hint: `A node must be eligible, run the CSI plugin healthy and have room for the keeper (nomad job status ${id}; docs/volumes.md#csi-volumes).`,
    details: { job: id },
  });
}

function notStarted(name: string, id: string, last: AllocationStub | undefined): SvcError {
  const events = Object.values(last?.TaskStates ?? {})
    .flatMap((state) => state.Events ?? [])
    .map((event) => event.DisplayMessage)
    .filter(Boolean)
    .slice(-5);
  return new SvcError(
    'container_failed',
    `the keeper of the volume ${name} (Nomad job ${id}) did not start within ${START_TIMEOUT_MS / 1000} s${events.length > 0 ? `:\n${events.map((e) => `[nomad] ${e}`).join('\n')}` : '.'}`,
    {
      hint: `nomad job status ${id} shows why; the CSI plugin must be healthy on a node that can run it (docs/volumes.md#csi-volumes).`,
      details: { job: id },
    },
  );
}

async function ignoreMissing(request: Promise<unknown>): Promise<void> {
  try {
    await request;
  } catch (error) {
    if (!(error instanceof SvcError && error.code === 'not_found')) throw error;
  }
}
