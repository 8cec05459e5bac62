/**
 * Ephemeral things (remote runs, previews) live while someone uses them.
 * A lease ends once its holder has been idle for its timeout: nothing asked
 * of it through the API (`touch`) and nothing in progress (`busy()`: calls
 * in flight, a log follower connected, a build running). Busy time counts as
 * activity, so the idle clock starts when the last user leaves.
 */

export interface LeaseOptions {
  /** Idle time after which the lease ends, in milliseconds. */
  readonly timeoutMs: number;
  /** True while the holder is in use; checked on every sweep. */
  readonly busy: () => boolean;
  /** Called once when the lease ends by idling (not on `release`). */
  readonly expire: () => void;
}

interface Lease extends LeaseOptions {
  lastActive: number;
}

/** How often leases are checked; the end of a lease comes at most this late. */
export const LEASE_SWEEP_MS = 1_000;

export class IdleLeases {
  readonly #leases = new Map<string, Lease>();
  readonly #now: () => number;
  readonly #timer: NodeJS.Timeout;

  constructor(options: { readonly sweepMs?: number; readonly now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#timer = setInterval(() => this.sweep(), options.sweepMs ?? LEASE_SWEEP_MS);
    this.#timer.unref();
  }

  /** Starts (or replaces) the lease of `id`, active from now. */
  hold(id: string, options: LeaseOptions): void {
    this.#leases.set(id, { ...options, lastActive: this.#now() });
  }

  /** Marks the holder used now. */
  touch(id: string): void {
    const lease = this.#leases.get(id);
    if (lease) lease.lastActive = this.#now();
  }

  /** When the lease ends if nothing happens from now on; null without a lease. */
  expiresAt(id: string): Date | null {
    const lease = this.#leases.get(id);
    if (!lease) return null;
    const from = lease.busy() ? this.#now() : lease.lastActive;
    return new Date(from + lease.timeoutMs);
  }

  /** Ends the lease without calling `expire` (the holder ended some other way). */
  release(id: string): void {
    this.#leases.delete(id);
  }

  /** Ends every lease idle for its timeout; public so that tests need not wait for the timer. */
  sweep(): void {
    const now = this.#now();
    for (const [id, lease] of this.#leases) {
      if (lease.busy()) lease.lastActive = now;
      else if (now - lease.lastActive >= lease.timeoutMs) {
        this.#leases.delete(id);
        lease.expire();
      }
    }
  }

  close(): void {
    clearInterval(this.#timer);
    this.#leases.clear();
  }
}
