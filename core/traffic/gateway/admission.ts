import { SvcError } from '../../model/errors.js';
import type { Instance, ServiceRegistry } from '../../infra/registry/types.js';

/** A taken slot on one instance; `release()` is idempotent. */
export interface Slot {
  readonly instance: Instance;
  release(): void;
}

export interface AdmissionLimits {
  /** Requests that may wait for a slot; one more gets 429 (`max_pending_tasks`). */
  readonly maxPending: number;
  /**
   * False: the request waits for a slot as long as it takes (until its signal aborts or the unit is
   * refused), not the wait timeout. A map's inputs wait so: its window bounds them, and the inputs
   * at the back of a backlog wait for those ahead of them, which may take longer than any timeout.
   */
  readonly waitTimeout?: boolean;
}

export interface AdmissionOptions {
  /** How long a queued request waits for a slot before 503 (config `queueTimeoutSeconds`). */
  readonly waitTimeoutMs?: number;
}

/**
 * What admission asks of the autoscaler about the units it manages (see
 * core/services/autoscale). Every method is called synchronously on the request path:
 * none may do I/O.
 */
export interface UnitSupervisor {
  /** True when the unit's containers start on demand: a request finding no instance waits instead of 503. */
  manages(unit: string): boolean;
  /** A request joined the unit's queue. Called once per queued request; coalesce. */
  queued(unit: string): void;
  /** A request was refused because the unit had no usable instance: demand that should start one. */
  refused(unit: string): void;
  /** Why a request must not wait for this unit, which has no usable instance (it is crash-looping), or null. */
  refusal(unit: string): SvcError | null;
  /** The 503 for a request that cannot get a slot now or in time: `starting`, `crash_loop` or `no_capacity`. */
  waitError(unit: string, waitedMs: number): SvcError;
  /** Why the unit's queue does not move, when there is more to say than busy (a container waits for a GPU), for the 429; absent or null: nothing. */
  waitReason?(unit: string): string | null;
}

/** What admission knows of one instance's use, for scale-down decisions. */
export interface InstanceUse {
  readonly inFlight: number;
  /** When a request last took or gave back a slot on it (ms since the epoch); undefined if never. */
  readonly lastActiveAt: number | undefined;
  readonly draining: boolean;
}

interface Use {
  /** The unit whose instance it is, once a request took a slot on it. */
  unit: string | undefined;
  inFlight: number;
  lastActiveAt: number | undefined;
  /** Takes no new request; set by drain(). */
  draining: boolean;
  /** Gone for good (forget()): dropped when its last request finishes. */
  forgotten: boolean;
  /** Resolved when inFlight reaches 0 while draining. */
  idle: (() => void)[];
}

interface Waiter {
  readonly resolve: (slot: Slot) => void;
  readonly reject: (error: SvcError) => void;
  done: boolean;
}

interface UnitState {
  readonly queue: Waiter[];
  /** Waiters in the queue that are still waiting (aborted ones are skipped lazily). */
  waiting: number;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;

function clientGone(): SvcError {
  return new SvcError('client_closed', 'the client went away while its request waited for a slot.');
}

/** Without an autoscaler, nothing will start a container: say so at once. */
const unsupervised: UnitSupervisor = {
  manages: () => false,
  queued: () => {},
  refused: () => {},
  refusal: () => null,
  waitError: (_unit, waitedMs) =>
    new SvcError('no_capacity', `no slot freed up within ${waitedMs / 1000} s.`, { headers: { 'Retry-After': '1' } }),
};

/**
 * Exact admission per deployment unit. A container instance takes at most
 * `capacity` requests at once (workers × concurrency, or one worker's
 * concurrency); a request that finds no free slot waits in a FIFO queue; a
 * request that would make the queue longer than `maxPending` gets 429 at
 * once. Node runs this on one thread and every decision is synchronous, so
 * the bound holds exactly under any burst.
 */
export class Admission {
  readonly #registry: ServiceRegistry;
  /** Per instance id: slots taken, last activity, draining. */
  readonly #uses = new Map<string, Use>();
  readonly #units = new Map<string, UnitState>();
  readonly #waitTimeoutMs: number;
  readonly #unwatch: () => void;
  #supervisor: UnitSupervisor = unsupervised;

  constructor(registry: ServiceRegistry, options: AdmissionOptions = {}) {
    this.#registry = registry;
    this.#waitTimeoutMs = options.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    // New or returning instances bring free slots: hand them to the waiting requests.
    this.#unwatch = registry.watch((unit, instances) => {
      this.#prune(unit, instances);
      this.#dispatch(unit);
    });
  }

  /** Lets the autoscaler start containers for waiting requests; returns the detach function. */
  supervise(supervisor: UnitSupervisor): () => void {
    this.#supervisor = supervisor;
    return () => {
      if (this.#supervisor === supervisor) this.#supervisor = unsupervised;
    };
  }

  /** Requests in flight and queued for a unit (what the autoscaler reads). */
  load(unit: string): { inFlight: number; queued: number } {
    let inFlight = 0;
    for (const instance of this.#registry.instances(unit)) inFlight += this.#uses.get(instance.id)?.inFlight ?? 0;
    return { inFlight, queued: this.#units.get(unit)?.waiting ?? 0 };
  }

  /** One instance's use: requests in flight, last activity, draining. */
  use(instanceId: string): InstanceUse {
    const use = this.#uses.get(instanceId);
    return { inFlight: use?.inFlight ?? 0, lastActiveAt: use?.lastActiveAt, draining: use?.draining ?? false };
  }

  /**
   * The hot path, without a promise: a slot on the least loaded instance when
   * nobody waits and one is free, else null (then `enter()` decides).
   */
  tryEnter(unit: string): Slot | null {
    if ((this.#units.get(unit)?.waiting ?? 0) !== 0) return null;
    return this.#take(this.#registry.instances(unit));
  }

  /**
   * Takes a slot on the least loaded instance, or waits for one. Rejects with
   * `queue_full` (429) when the queue is full, `client_closed` when `signal`
   * aborts while waiting, and 503 when no slot can come: at once when no
   * instance serves an unsupervised unit (`no_capacity`) or a crash-looping
   * one (`crash_loop`), else after the wait timeout (the supervisor says why).
   * A supervised unit with no instance queues the request like any other:
   * only registered instances count as capacity, so the bound stays exact
   * while containers start.
   */
  enter(unit: string, limits: AdmissionLimits, signal: AbortSignal): Promise<Slot> {
    const slot = this.tryEnter(unit);
    if (slot) return Promise.resolve(slot);
    const instances = this.#registry.instances(unit);
    const supervisor = this.#supervisor;
    const usable = instances.some((instance) => !this.#uses.get(instance.id)?.draining);
    if (!usable) {
      if (!supervisor.manages(unit)) {
        return Promise.reject(
          new SvcError('no_capacity', 'no healthy container serves this workload right now.', {
            hint: 'Its container may have crashed or exited; the workload logs say why.',
            headers: { 'Retry-After': '1' },
          }),
        );
      }
      const refusal = supervisor.refusal(unit);
      if (refusal) {
        supervisor.refused(unit);
        return Promise.reject(refusal);
      }
    }
    const state = this.#state(unit);
    if (state.waiting >= limits.maxPending) {
      if (!usable && limits.maxPending === 0) {
        // Nothing may wait, yet the unit is at zero: wake it for the retry instead of refusing forever.
        supervisor.refused(unit);
        return Promise.reject(supervisor.waitError(unit, 0));
      }
      const why = supervisor.waitReason?.(unit);
      return Promise.reject(
        new SvcError(
          'queue_full',
          `the workload is busy: ${state.waiting} requests are already waiting (max_pending_tasks is ${limits.maxPending})${why ? `; its container is ${why}` : ''}.`,
          {
            hint: 'Retry after the Retry-After seconds, or raise max_pending_tasks or the workload capacity.',
            headers: { 'Retry-After': '1' },
          },
        ),
      );
    }
    if (signal.aborted) return Promise.reject(clientGone());
    return new Promise<Slot>((resolve, reject) => {
      const settle = (slot: Slot | null, error?: SvcError) => {
        if (waiter.done) return;
        waiter.done = true;
        state.waiting--;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (slot) resolve(slot);
        else reject(error);
      };
      const waiter: Waiter = { done: false, resolve: (slot) => settle(slot), reject: (error) => settle(null, error) };
      const onAbort = () => waiter.reject(clientGone());
      const timer =
        limits.waitTimeout === false
          ? undefined
          : setTimeout(() => waiter.reject(this.#supervisor.waitError(unit, this.#waitTimeoutMs)), this.#waitTimeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      state.queue.push(waiter);
      state.waiting++;
      supervisor.queued(unit);
    });
  }

  /**
   * Marks instances as draining — from this call on they take no new request
   * — and resolves once the requests in flight on them have finished. The
   * marks stay until `forget()`, so that a worker restarting in a draining
   * container does not take requests again.
   */
  drain(instanceIds: readonly string[]): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const id of instanceIds) {
      const use = this.#useOf(id);
      use.draining = true;
      if (use.inFlight > 0) waits.push(new Promise<void>((resolve) => use.idle.push(resolve)));
    }
    return Promise.all(waits).then(() => {});
  }

  /** Drops the drain marks of instances that are gone for good (a stopped container's workers). */
  forget(instanceIds: readonly string[]): void {
    for (const id of instanceIds) {
      const use = this.#uses.get(id);
      if (!use) continue;
      use.draining = true;
      use.forgotten = true;
      if (use.inFlight === 0) this.#uses.delete(id);
    }
  }

  /** Answers every request waiting in the unit's queue with `error` (a crash loop, a removed deployment). */
  rejectQueued(unit: string, error: SvcError): void {
    const state = this.#units.get(unit);
    if (!state) return;
    for (const waiter of state.queue.splice(0)) if (!waiter.done) waiter.reject(error);
    this.#units.delete(unit);
  }

  close(): void {
    this.#unwatch();
    for (const state of this.#units.values()) {
      for (const waiter of state.queue) if (!waiter.done) waiter.reject(new SvcError('no_capacity', 'the gateway is shutting down.'));
    }
    this.#units.clear();
  }

  #useOf(id: string): Use {
    let use = this.#uses.get(id);
    if (!use)
      this.#uses.set(id, (use = { unit: undefined, inFlight: 0, lastActiveAt: undefined, draining: false, forgotten: false, idle: [] }));
    return use;
  }

  /**
   * Forgets idle instances that left the registry (a crashed or stopped
   * container). Drain marks stay until forget(): a draining container's
   * worker that restarts must not take requests again.
   */
  #prune(unit: string, instances: readonly Instance[]): void {
    for (const [id, use] of this.#uses) {
      if (use.unit === unit && use.inFlight === 0 && !use.draining && !instances.some((i) => i.id === id)) this.#uses.delete(id);
    }
  }

  #state(unit: string): UnitState {
    let state = this.#units.get(unit);
    if (!state) this.#units.set(unit, (state = { queue: [], waiting: 0 }));
    return state;
  }

  /** A slot on the instance with the most room left, or null when all are full or draining. */
  #take(instances: readonly Instance[]): Slot | null {
    let best: Instance | null = null;
    let bestFree = 0;
    for (const instance of instances) {
      const use = this.#uses.get(instance.id);
      if (use?.draining) continue;
      const free = instance.capacity - (use?.inFlight ?? 0);
      if (free > bestFree) {
        best = instance;
        bestFree = free;
      }
    }
    if (!best) return null;
    const chosen = best;
    const use = this.#useOf(chosen.id);
    use.unit = chosen.service;
    use.inFlight++;
    use.lastActiveAt = Date.now();
    let released = false;
    return {
      instance: chosen,
      release: () => {
        if (released) return;
        released = true;
        use.inFlight--;
        use.lastActiveAt = Date.now();
        if (use.inFlight === 0) {
          if (use.idle.length > 0) for (const resolve of use.idle.splice(0)) resolve();
          const gone = use.forgotten || (!use.draining && !this.#registry.instances(chosen.service).some((i) => i.id === chosen.id));
          if (gone && this.#uses.get(chosen.id) === use) this.#uses.delete(chosen.id);
        }
        this.#dispatch(chosen.service);
      },
    };
  }

  /** Gives free slots to waiting requests, oldest first. */
  #dispatch(unit: string): void {
    const state = this.#units.get(unit);
    if (!state) return;
    while (state.queue.length > 0) {
      const head = state.queue[0]!;
      if (head.done) {
        state.queue.shift();
        continue;
      }
      const slot = this.#take(this.#registry.instances(unit));
      if (!slot) return;
      state.queue.shift();
      head.resolve(slot);
    }
    if (state.waiting === 0 && state.queue.length === 0) this.#units.delete(unit);
  }
}
