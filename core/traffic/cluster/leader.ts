/**
 * Leader election among svc server replicas over a Consul session and a
 * lock key (Consul's leader-election pattern, docs/operators.md): create a TTL session
 * (Behavior release, short LockDelay), renew it every TTL/2, acquire the key
 * with `?acquire=<session>`, and while not leading watch the key with
 * blocking queries and try again when its `Session` is empty.
 *
 * Safety first: leadership is dropped (the signal aborts) before anything
 * else when a renew answers 404, when the key shows another (or no) session,
 * when no renew has succeeded for a whole TTL (Consul may invalidate the
 * session from then on), and on close. A lost session is abandoned
 * (destroyed, best effort) and the replica campaigns again with a new one.
 */
import { hostname } from 'node:os';
import { backoffMs, sleep } from '../../infra/state/backoff.js';
import { ConsulClient, ConsulError, type KvEntry } from '../../infra/state/consul-client.js';
import { LeadershipLostError, type LeaderElection, type LeaderElectionOptions } from './types.js';

export { LeadershipLostError } from './types.js';
export type { LeaderElection, LeaderElectionOptions } from './types.js';

/** How long one blocking query on the key waits. */
const WATCH_WAIT_MS = 60_000;

/** Ends the current session's campaign; the reason was already reported through onDemoted or report. */
class SessionEnded extends Error {
  constructor(readonly reason: string) {
    super(`session ended: ${reason}`);
    this.name = 'SessionEnded';
  }
}

export function startLeaderElection(options: LeaderElectionOptions): LeaderElection {
  const ttlSeconds = options.ttlSeconds ?? 15;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 10 || ttlSeconds > 86_400) {
    throw new RangeError(`ttlSeconds must be a whole number from 10 to 86400 (Consul's bounds), not ${ttlSeconds}`);
  }
  const ttlMs = ttlSeconds * 1000;
  const lockDelayMs = Math.round((options.lockDelaySeconds ?? 1) * 1000);
  const key = options.key ?? 'svc/leader';
  /** How long a replica that lost its session waits before campaigning again. */
  const standBackMs = Math.max(2 * lockDelayMs, ttlMs / 2);
  const report = options.report ?? ((error: unknown) => console.error(error));
  // Non-blocking calls must answer well within a renew interval.
  const consul = new ConsulClient({
    address: options.consul.address,
    token: options.consul.token,
    timeoutMs: Math.min(10_000, ttlMs / 2),
    maxSockets: 4,
    observe: options.consul.observe,
  });
  const holderValue = Buffer.from(JSON.stringify({ hostname: hostname(), pid: process.pid, address: options.advertise ?? null }));
  const stop = new AbortController();
  let leading: AbortController | null = null;
  let closing: Promise<void> | null = null;
  /** The holder's advertised address, as the lock key last showed it. */
  let leaderAddress: string | null = null;

  const elect = (): void => {
    leaderAddress = options.advertise ?? null;
    const controller = new AbortController();
    leading = controller;
    try {
      void Promise.resolve(options.onElected(controller.signal)).catch(report);
    } catch (error) {
      report(error);
    }
  };

  const demote = (reason: string, cutOff = false): void => {
    const controller = leading;
    if (controller === null) return;
    leading = null;
    controller.abort(new LeadershipLostError(reason));
    try {
      options.onDemoted?.(reason, cutOff);
    } catch (error) {
      report(error);
    }
  };

  /** One session: create, renew, acquire/watch; resolves when the session is lost (true) or on close. */
  async function campaign(): Promise<boolean> {
    const createdAt = Date.now();
    const id = await consul.sessionCreate(
      { name: `svc leader ${hostname()}:${process.pid}`, ttl: `${ttlSeconds}s`, behavior: 'release', lockDelay: `${lockDelayMs}ms` },
      { signal: stop.signal },
    );

    const session = new AbortController();
    const onStop = (): void => session.abort(new SessionEnded('closed'));
    stop.signal.addEventListener('abort', onStop, { once: true });
    let held = false;
    let lost = false;
    /** Leadership (if any) goes first, then the session's loops stop. */
    const lose = (reason: string, cutOff = false): void => {
      held = false;
      lost = true;
      demote(reason, cutOff);
      session.abort(new SessionEnded(reason));
    };
    let deadline: NodeJS.Timeout | undefined;
    const renewedAt = (sentAt: number): void => {
      clearTimeout(deadline);
      deadline = setTimeout(
        () => lose(`no session renewal succeeded for the TTL (${ttlSeconds}s)`, true),
        Math.max(0, sentAt + ttlMs - Date.now()),
      );
    };
    renewedAt(createdAt);
    const renewing = renew(id, session.signal, renewedAt, lose);
    try {
      await watch(id, session.signal, lose, () => {
        held = true;
      });
    } catch (error) {
      if (!session.signal.aborted) {
        lose('the election failed');
        throw error;
      }
    } finally {
      clearTimeout(deadline);
      stop.signal.removeEventListener('abort', onStop);
      if (!session.signal.aborted) session.abort(new SessionEnded('done'));
      await renewing;
      demote('closed');
      await abandon(id, held && stop.signal.aborted);
    }
    return lost;
  }

  /** Renews every TTL/2; failures retry sooner; a 404 means the session is gone. */
  async function renew(
    id: string,
    signal: AbortSignal,
    renewedAt: (sentAt: number) => void,
    lose: (reason: string) => void,
  ): Promise<void> {
    let waitMs = ttlMs / 2;
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
        waitMs = ttlMs / 2;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ConsulError && error.status === 404) return lose('the session was invalidated (renew answered 404)');
        failures += 1;
        report(error);
        waitMs = Math.min(ttlMs / 10, backoffMs(failures, 250, ttlMs / 10));
      }
    }
  }

  /** Watches the key; acquires it when free; returns only by throwing (the session's abort reason or an error). */
  async function watch(id: string, signal: AbortSignal, lose: (reason: string) => void, acquired: () => void): Promise<never> {
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
        leaderAddress = holder === '' || entry === undefined ? null : addressOf(entry);
        failures = 0;
      } catch (error) {
        await retry(error);
        continue;
      }
      if (leading !== null) {
        if (holder === id) continue;
        // Our session no longer holds the key: step down, then start over with a fresh session.
        lose(holder === '' ? 'the lock key is no longer held by this session' : 'the lock key is held by another session');
        signal.throwIfAborted();
      }
      if (holder === id) {
        // An acquire whose answer was lost did succeed.
        acquired();
        elect();
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
          lose('the session was invalidated (acquire refused it)');
          signal.throwIfAborted();
        }
        await retry(error);
        index = 0;
        continue;
      }
      signal.throwIfAborted();
      if (ok) {
        acquired();
        elect();
        continue;
      }
      // Free but refused: the key's lock-delay (after an invalidated session) or another replica won.
      index = 0;
      await sleep(Math.min(250, Math.max(50, lockDelayMs)), signal);
    }
  }

  /** Best effort: release the key (on close, so another replica takes over at once) and destroy the session. */
  async function abandon(id: string, release: boolean): Promise<void> {
    const signal = AbortSignal.timeout(Math.min(5000, ttlMs / 2));
    try {
      if (release) await consul.kvSet(key, Buffer.alloc(0), { release: id, signal });
    } catch (error) {
      report(error);
    }
    try {
      await consul.sessionDestroy(id, { signal });
    } catch (error) {
      if (!stop.signal.aborted) report(error);
    }
  }

  const running = (async () => {
    let attempt = 0;
    while (!stop.signal.aborted) {
      let pauseMs = 100;
      try {
        // A replica that just lost its session stands back for a while, so that a healthy one takes over.
        if (await campaign()) pauseMs = standBackMs;
        attempt = 0;
      } catch (error) {
        if (stop.signal.aborted) break;
        attempt += 1;
        report(error);
      }
      try {
        await sleep(attempt === 0 ? pauseMs : backoffMs(attempt, 250, 15_000), stop.signal);
      } catch {
        break;
      }
    }
  })();

  return {
    isLeader: () => leading !== null,
    leaderAddress: () => leaderAddress,
    close() {
      closing ??= (async () => {
        demote('closed');
        stop.abort(new SessionEnded('closed'));
        await running;
        consul.close();
      })();
      return closing;
    },
  };
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
