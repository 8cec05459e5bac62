import { SvcError } from '../errors.js';
import type { Instance, ServiceRegistry } from '../registry/types.js';

/** A taken slot on one instance; `release()` is idempotent. */
export interface Slot {
  readonly instance: Instance;
  release(): void;
}

export interface AdmissionLimits {
  /** Requests that may wait for a slot; one more gets 429 (`max_pending_tasks`). */
  readonly maxPending: number;
}

export interface AdmissionOptions {
  /** How long a queued request waits for a slot before 503 `no_capacity`. */
  readonly waitTimeoutMs?: number;
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
  readonly #inFlight = new Map<string, number>();
  readonly #units = new Map<string, UnitState>();
  readonly #waitTimeoutMs: number;
  readonly #unwatch: () => void;

  constructor(registry: ServiceRegistry, options: AdmissionOptions = {}) {
    this.#registry = registry;
    this.#waitTimeoutMs = options.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    // New or returning instances bring free slots: hand them to the waiting requests.
    this.#unwatch = registry.watch((unit) => this.#dispatch(unit));
  }

  /** Requests in flight and queued for a unit (what the autoscaler will read). */
  load(unit: string): { inFlight: number; queued: number } {
    let inFlight = 0;
    for (const instance of this.#registry.instances(unit)) inFlight += this.#inFlight.get(instance.id) ?? 0;
    return { inFlight, queued: this.#units.get(unit)?.waiting ?? 0 };
  }

  /**
   * Takes a slot on the least loaded instance, or waits for one. Rejects with
   * `no_capacity` when no instance serves the unit, `queue_full` (429) when
   * the queue is full, `client_closed` when `signal` aborts while waiting.
   */
  enter(unit: string, limits: AdmissionLimits, signal: AbortSignal): Promise<Slot> {
    const instances = this.#registry.instances(unit);
    if (instances.length === 0) {
      return Promise.reject(new SvcError('no_capacity', 'no healthy container serves this workload right now.', {
        hint: 'Its container may have crashed or exited; the workload logs say why.',
        headers: { 'Retry-After': '1' },
      }));
    }
    const state = this.#state(unit);
    if (state.waiting === 0) {
      const slot = this.#take(instances);
      if (slot) return Promise.resolve(slot);
    }
    if (state.waiting >= limits.maxPending) {
      return Promise.reject(new SvcError('queue_full', `the workload is busy: ${state.waiting} requests are already waiting (max_pending_tasks is ${limits.maxPending}).`, {
        hint: 'Retry after the Retry-After seconds, or raise max_pending_tasks or the workload capacity.',
        headers: { 'Retry-After': '1' },
      }));
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
      const timer = setTimeout(
        () => waiter.reject(new SvcError('no_capacity', `no slot freed up within ${this.#waitTimeoutMs / 1000} s.`, { headers: { 'Retry-After': '1' } })),
        this.#waitTimeoutMs,
      );
      signal.addEventListener('abort', onAbort, { once: true });
      state.queue.push(waiter);
      state.waiting++;
    });
  }

  close(): void {
    this.#unwatch();
    for (const state of this.#units.values()) {
      for (const waiter of state.queue) if (!waiter.done) waiter.reject(new SvcError('no_capacity', 'the gateway is shutting down.'));
    }
    this.#units.clear();
  }

  #state(unit: string): UnitState {
    let state = this.#units.get(unit);
    if (!state) this.#units.set(unit, (state = { queue: [], waiting: 0 }));
    return state;
  }

  /** A slot on the instance with the most room left, or null when all are full. */
  #take(instances: readonly Instance[]): Slot | null {
    let best: Instance | null = null;
    let bestFree = 0;
    for (const instance of instances) {
      const free = instance.capacity - (this.#inFlight.get(instance.id) ?? 0);
      if (free > bestFree) {
        best = instance;
        bestFree = free;
      }
    }
    if (!best) return null;
    const chosen = best;
    this.#inFlight.set(chosen.id, (this.#inFlight.get(chosen.id) ?? 0) + 1);
    let released = false;
    return {
      instance: chosen,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.#inFlight.get(chosen.id) ?? 1) - 1;
        if (left > 0) this.#inFlight.set(chosen.id, left);
        else this.#inFlight.delete(chosen.id);
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
