/**
 * The Consul session behind a leader election (core/traffic/cluster/leader.ts): what the
 * election's parts share, the renew loop that keeps the session alive, and giving it up.
 */
import { backoffMs, sleep } from '../../infra/state/backoff.js';
import { ConsulError, type ConsulClient } from '../../infra/state/consul-client.js';

/** What the session, the watch and the election share, fixed when the election starts. */
export interface LeaderSettings {
  readonly consul: ConsulClient;
  readonly key: string;
  readonly ttlSeconds: number;
  readonly ttlMs: number;
  readonly lockDelayMs: number;
  /** The lock key's value while this replica holds it: hostname, pid, address. */
  readonly holderValue: Buffer;
  readonly report: (error: unknown) => void;
}

/** Ends the current session's campaign; the reason was already reported through onDemoted or report. */
export class SessionEnded extends Error {
  constructor(readonly reason: string) {
    super(`session ended: ${reason}`);
    this.name = 'SessionEnded';
  }
}

/**
 * Renews every TTL/3 until `signal` aborts; failures retry sooner; a 404 means the session is gone.
 * TTL/3 rather than TTL/2: on a busy machine one renewal may hang for its whole time-out (TTL/4),
 * and the next ones must still fit before the TTL runs out, or the leader steps down for nothing.
 */
export async function renewSession(
  settings: LeaderSettings,
  id: string,
  signal: AbortSignal,
  renewedAt: (sentAt: number) => void,
  lose: (reason: string) => void,
): Promise<void> {
  const { consul, ttlMs, report } = settings;
  let waitMs = ttlMs / 3;
  let failures = 0;
  while (!signal.aborted) {
    try {
      await sleep(waitMs, signal);
    } catch {
      return;
    }
    const sentAt = Date.now();
    try {
      await consul.sessionRenew(id, { signal });
      renewedAt(sentAt);
      failures = 0;
      waitMs = ttlMs / 3;
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ConsulError && error.status === 404) return lose('the session was invalidated (renew answered 404)');
      failures += 1;
      report(error);
      waitMs = Math.min(ttlMs / 10, backoffMs(failures, 250, ttlMs / 10));
    }
  }
}

/**
 * Best effort: release the key (on close, so another replica takes over at once) and destroy the session.
 * A failed destroy is only reported while the election still runs (`stopped` aborted means it is closing).
 */
export async function abandonSession(settings: LeaderSettings, id: string, release: boolean, stopped: AbortSignal): Promise<void> {
  const { consul, key, ttlMs, report } = settings;
  const signal = AbortSignal.timeout(Math.min(5000, ttlMs / 2));
  try {
    if (release) await consul.kvSet(key, Buffer.alloc(0), { release: id, signal });
  } catch (error) {
    report(error);
  }
  try {
    await consul.sessionDestroy(id, { signal });
  } catch (error) {
    if (!stopped.aborted) report(error);
  }
}
