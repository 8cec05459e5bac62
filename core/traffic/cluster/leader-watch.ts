/**
 * The lock loop of a leader election (core/traffic/cluster/leader.ts): watch the lock key with
 * blocking queries, acquire it with this replica's session when it is free, and step down as soon
 * as the key shows another (or no) session while this replica leads.
 */
import { backoffMs, sleep } from '../../infra/state/backoff.js';
import { ConsulError, type KvEntry } from '../../infra/state/consul-client.js';
import type { LeaderSettings } from './leader-session.js';

/** How long one blocking query on the key waits. */
const WATCH_WAIT_MS = 60_000;

/** How the watch of one session reads and changes the election it runs for. */
export interface LockWatchHooks {
  /** Whether this replica leads now (through any session). */
  readonly isLeading: () => boolean;
  /** The holder's advertised address, as the key shows it now (null when none). */
  readonly sawLeader: (address: string | null) => void;
  /** The key is held by this session: mark it held, then lead. */
  readonly acquired: () => void;
  /** Leadership goes first, then the session's loops stop (its signal aborts). */
  readonly lose: (reason: string) => void;
}

/** Watches the key; acquires it when free; returns only by throwing (the session's abort reason or an error). */
export async function watchLock(settings: LeaderSettings, id: string, signal: AbortSignal, hooks: LockWatchHooks): Promise<never> {
  const { consul, key, ttlMs, lockDelayMs, holderValue, report } = settings;
  let index = 0;
  let failures = 0;
  const retry = async (error: unknown): Promise<void> => {
    if (signal.aborted) throw signal.reason;
    failures += 1;
    report(error);
    await sleep(backoffMs(failures, 250, Math.max(1000, ttlMs / 4)), signal);
  };
  for (;;) {
    signal.throwIfAborted();
    let holder: string;
    let value: Buffer | undefined;
    try {
      const read = await consul.kvGet(key, { signal, block: index > 0 ? { index, waitMs: WATCH_WAIT_MS } : undefined });
      const next = read.index ?? 0;
      index = next < index ? 0 : next; // an index going backwards (snapshot restore) restarts the watch
      const entry = read.value[0];
      holder = entry?.Session ?? '';
      value = entry?.Value;
      hooks.sawLeader(holder === '' || entry === undefined ? null : addressOf(entry));
      failures = 0;
    } catch (error) {
      await retry(error);
      continue;
    }
    if (hooks.isLeading()) {
      if (holder === id) continue;
      // Our session no longer holds the key: step down, then start over with a fresh session.
      hooks.lose(holder === '' ? 'the lock key is no longer held by this session' : 'the lock key is held by another session');
      signal.throwIfAborted();
    }
    if (holder === id) {
      // An acquire whose answer was lost did succeed.
      hooks.acquired();
      continue;
    }
    if (holder !== '' && value?.equals(holderValue) === true) {
      // This very process holds it through an older session (svc server started its platform again once
      // Consul came back, and could not destroy it then): let it go now rather than wait out its TTL.
      await consul.sessionDestroy(holder, { signal }).catch(report);
      continue;
    }
    if (holder !== '') continue; // someone leads; wait for the key to change
    let ok: boolean;
    try {
      ok = await consul.kvSet(key, holderValue, { acquire: id, signal });
    } catch (error) {
      if (error instanceof ConsulError && error.status === 500 && /invalid session/i.test(error.body)) {
        hooks.lose('the session was invalidated (acquire refused it)');
        signal.throwIfAborted();
      }
      await retry(error);
      index = 0;
      continue;
    }
    signal.throwIfAborted();
    if (ok) {
      hooks.acquired();
      continue;
    }
    // Free but refused: the key's lock-delay (after an invalidated session) or another replica won.
    index = 0;
    await sleep(Math.min(250, Math.max(50, lockDelayMs)), signal);
  }
}

/** The `address` in the lock key's value (the holder's `holderValue`), or null. */
function addressOf(entry: KvEntry): string | null {
  try {
    const address = (JSON.parse(entry.Value.toString('utf8')) as { address?: unknown }).address;
    return typeof address === 'string' && /^https?:\/\//.test(address) ? address : null;
  } catch {
    return null; // not a value svc wrote: no address to forward to
  }
}
