/**
 * Per-client token buckets for the API routes anyone may call without a
 * token (the device flow, sign-in): they create state or guess at secrets,
 * so one client must not be able to flood them. In memory, per process: a
 * cluster of gateways gives each client that many times the rate, which is
 * still a bound.
 */

export interface RateLimit {
  /** Requests a client may send at once after being quiet. */
  readonly burst: number;
  /** Requests per minute it may keep sending. */
  readonly perMinute: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Clients tracked at most; the longest-idle are forgotten first (a forgotten client starts with a full bucket). */
const MAX_CLIENTS = 10_000;

export class RateLimiter {
  readonly #limit: RateLimit;
  readonly #now: () => number;
  /** Insertion order = least recently seen first (each take re-inserts). */
  readonly #buckets = new Map<string, Bucket>();

  constructor(limit: RateLimit, now: () => number = Date.now) {
    this.#limit = limit;
    this.#now = now;
  }

  /** Takes one request for `client`: 0 when allowed, else the whole seconds to wait before the next one is. */
  take(client: string): number {
    const now = this.#now();
    const perMs = this.#limit.perMinute / 60_000;
    const previous = this.#buckets.get(client);
    const tokens = previous === undefined ? this.#limit.burst : Math.min(this.#limit.burst, previous.tokens + (now - previous.at) * perMs);
    this.#buckets.delete(client);
    if (this.#buckets.size >= MAX_CLIENTS) this.#buckets.delete(this.#buckets.keys().next().value!);
    if (tokens >= 1) {
      this.#buckets.set(client, { tokens: tokens - 1, at: now });
      return 0;
    }
    this.#buckets.set(client, { tokens, at: now });
    return Math.max(1, Math.ceil((1 - tokens) / perMs / 1000));
  }
}
