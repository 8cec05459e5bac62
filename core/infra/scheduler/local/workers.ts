import type { ServiceRegistry } from '../../registry/types.js';
import type { DeploymentUnit, WorkerStatus } from '../types.js';
import type { RuntimeEvent } from './frames.js';
import { probeHealth, waitHealthy } from './health.js';

interface Slot {
  readonly index: number;
  readonly socketPath: string;
  readonly instanceId: string;
  pid: number | undefined;
  /** Answered its health route since it last started. */
  up: boolean;
  registered: boolean;
  /** Cuts a health-poll pause short when the runtime says the worker listens. */
  wake: (() => void) | undefined;
}

export interface WorkerSetOptions {
  readonly containerId: string;
  readonly unit: DeploymentUnit;
  readonly socketPaths: readonly string[];
  readonly registry: ServiceRegistry;
  readonly log: (text: string) => void;
  /** How long a restarted worker may take to answer its health route before it is left unregistered. */
  readonly restartTimeoutMs: number;
}

/**
 * The workers of one container, each its own registry instance
 * (`<container>-w<i>`, capacity = the workload's concurrency), so that the
 * gateway never sends one worker more than it takes. The runtime's events
 * say when a worker dies (deregistered at once) and when its replacement
 * listens (registered again once it answers its health route).
 */
export class WorkerSet {
  readonly #options: WorkerSetOptions;
  readonly #slots: Slot[];
  /** True between register() and deregister(): the container as a whole is in service. */
  #live = false;

  constructor(options: WorkerSetOptions) {
    this.#options = options;
    this.#slots = options.socketPaths.map((socketPath, index) => ({
      index,
      socketPath,
      instanceId: `${options.containerId}-w${index}`,
      pid: undefined,
      up: false,
      registered: false,
      wake: undefined,
    }));
  }

  onEvent(event: RuntimeEvent): void {
    if (event.event !== 'listening' && event.event !== 'worker_exited' && event.event !== 'worker_retiring') return;
    const slot = this.#slots[event.worker];
    if (!slot) return;
    if (event.event === 'listening') {
      slot.pid = event.pid;
      slot.wake?.();
      if (this.#live && !slot.up) void this.#recover(slot, event.pid);
      return;
    }
    if (slot.pid !== undefined && slot.pid !== event.pid) return; // about a worker already replaced
    slot.up = false;
    const deregistered = slot.registered ? 'deregistered, ' : '';
    if (event.event === 'worker_retiring') {
      // Before it stops listening: no request is sent to it meanwhile, they wait for its replacement.
      this.#options.log(
        `worker ${slot.index} of ${this.#options.containerId} (pid ${event.pid}) is stopping after a call timed out; ${deregistered}a fresh one replaces it`,
      );
    } else {
      slot.pid = undefined;
      const restart = event.restartIn === null ? 'not restarted' : `restarting in ${event.restartIn} s`;
      this.#options.log(
        `worker ${slot.index} of ${this.#options.containerId} (pid ${event.pid}) exited with ${event.status}; ${deregistered}${restart}`,
      );
    }
    if (slot.registered) {
      slot.registered = false;
      void this.#options.registry.deregister(slot.instanceId);
    }
  }

  /** Waits until every worker answers its health route. */
  async waitHealthy(timeoutMs: number, cancelled: () => boolean): Promise<'healthy' | 'cancelled' | 'timeout'> {
    const deadline = Date.now() + timeoutMs;
    const outcomes = await Promise.all(this.#slots.map((slot) => this.#waitSlot(slot, deadline, cancelled)));
    return outcomes.find((outcome) => outcome !== 'healthy') ?? 'healthy';
  }

  /** Puts the container in service: every worker that is up now, the others once they are. */
  async register(): Promise<void> {
    this.#live = true;
    await Promise.all(this.#slots.filter((slot) => slot.up).map((slot) => this.#register(slot)));
    // A worker that died and came back while the container was starting announced itself before
    // `#live`: nothing else would ever register it, so check it now.
    for (const slot of this.#slots) if (!slot.up && slot.pid !== undefined) void this.#recover(slot, slot.pid);
  }

  async deregister(): Promise<void> {
    this.#live = false;
    await Promise.all(
      this.#slots.map(async (slot) => {
        slot.registered = false;
        await this.#options.registry.deregister(slot.instanceId);
      }),
    );
  }

  status(): WorkerStatus[] {
    return this.#slots.map((slot) => ({
      index: slot.index,
      pid: slot.pid,
      instanceId: slot.instanceId,
      socketPath: slot.socketPath,
      registered: slot.registered,
    }));
  }

  async #waitSlot(slot: Slot, deadline: number, cancelled: () => boolean): Promise<'healthy' | 'cancelled' | 'timeout'> {
    let delay = 5;
    while (Date.now() < deadline) {
      if (cancelled()) return 'cancelled';
      // Healthy once it answers and the runtime has said which process it is: the answer can
      // overtake the runtime's `listening` event, and status() must not show a healthy worker without a pid.
      if (slot.pid !== undefined && (await probeHealth(slot.socketPath))) {
        slot.up = true;
        return 'healthy';
      }
      if (cancelled()) return 'cancelled';
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        slot.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      slot.wake = undefined;
      delay = Math.min(delay * 2, 50);
    }
    return 'timeout';
  }

  async #recover(slot: Slot, pid: number): Promise<void> {
    const current = () => this.#live && slot.pid === pid;
    const outcome = await waitHealthy({
      socketPath: slot.socketPath,
      timeoutMs: this.#options.restartTimeoutMs,
      cancelled: () => !current(),
    });
    if (outcome !== 'healthy' || !current() || slot.up) return;
    slot.up = true;
    await this.#register(slot);
    this.#options.log(`worker ${slot.index} of ${this.#options.containerId} is back (pid ${pid}) and registered`);
  }

  async #register(slot: Slot): Promise<void> {
    const { unit, registry, containerId } = this.#options;
    slot.registered = true;
    await registry.register({
      id: slot.instanceId,
      service: unit.key,
      address: { kind: 'unix', socketPath: slot.socketPath },
      // One instance per worker: the gateway's per-instance limit is exactly the worker's.
      capacity: unit.workload.scaling.concurrency,
      meta: {
        app: unit.ref.app,
        workload: unit.workload.name,
        stage: unit.ref.stage,
        workspace: unit.ref.workspace,
        container: containerId,
        worker: String(slot.index),
      },
    });
  }
}
