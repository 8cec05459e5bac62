/**
 * Leader election among svc server replicas over a Consul session and a
 * lock key (Consul's leader-election pattern, docs/operators.md): create a TTL session
 * (Behavior release, short LockDelay), renew it every TTL/3, acquire the key
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
import { ConsulClient } from '../../infra/state/consul-client.js';
import { abandonSession, type LeaderSettings, renewSession, SessionEnded } from './leader-session.js';
import { watchLock } from './leader-watch.js';
import { LeadershipLostError, type LeaderElection, type LeaderElectionOptions } from './types.js';

export { LeadershipLostError } from './types.js';
export type { LeaderElection, LeaderElectionOptions } from './types.js';

export function startLeaderElection(options: LeaderElectionOptions): LeaderElection {
  const ttlSeconds = options.ttlSeconds ?? 15;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 10 || ttlSeconds > 86_400) {
    throw new RangeError(`ttlSeconds must be a whole number from 10 to 86400 (Consul's bounds), not ${ttlSeconds}`);
  }
  const ttlMs = ttlSeconds * 1000;
  // Non-blocking calls must answer well within a renew interval (TTL/3): a hung renewal gives up in time for another.
  const consul = new ConsulClient({
    address: options.consul.address,
    token: options.consul.token,
    timeoutMs: Math.min(10_000, ttlMs / 4),
    maxSockets: 4,
    observe: options.consul.observe,
  });
  const election = new ConsulLeaderElection(options, {
    consul,
    key: options.key ?? 'svc/leader',
    ttlSeconds,
    ttlMs,
    lockDelayMs: Math.round((options.lockDelaySeconds ?? 1) * 1000),
    holderValue: Buffer.from(JSON.stringify({ hostname: hostname(), pid: process.pid, address: options.advertise ?? null })),
    report: options.report ?? ((error: unknown) => console.error(error)),
  });
  return {
    isLeader: () => election.isLeader(),
    leaderAddress: () => election.leaderAddress(),
    close: () => election.close(),
  };
}

/** One replica's election: campaigns session after session until closed, leading while its session holds the key. */
class ConsulLeaderElection {
  readonly #options: LeaderElectionOptions;
  readonly #settings: LeaderSettings;
  /** How long a replica that lost its session waits before campaigning again. */
  readonly #standBackMs: number;
  readonly #stop = new AbortController();
  #leading: AbortController | null = null;
  #closing: Promise<void> | null = null;
  /** The holder's advertised address, as the lock key last showed it. */
  #leaderAddress: string | null = null;
  readonly #running: Promise<void>;

  constructor(options: LeaderElectionOptions, settings: LeaderSettings) {
    this.#options = options;
    this.#settings = settings;
    this.#standBackMs = Math.max(2 * settings.lockDelayMs, settings.ttlMs / 2);
    this.#running = this.#run();
  }

  isLeader(): boolean {
    return this.#leading !== null;
  }

  leaderAddress(): string | null {
    return this.#leaderAddress;
  }

  /** Steps down first, then ends the campaign (releasing the key if held and destroying the session). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#demote('closed');
      this.#stop.abort(new SessionEnded('closed'));
      await this.#running;
      this.#settings.consul.close();
    })();
    return this.#closing;
  }

  #elect(): void {
    this.#leaderAddress = this.#options.advertise ?? null;
    const controller = new AbortController();
    this.#leading = controller;
    try {
      void Promise.resolve(this.#options.onElected(controller.signal)).catch(this.#settings.report);
    } catch (error) {
      this.#settings.report(error);
    }
  }

  /** The leader's signal aborts before onDemoted is told. */
  #demote(reason: string, cutOff = false): void {
    const controller = this.#leading;
    if (controller === null) return;
    this.#leading = null;
    controller.abort(new LeadershipLostError(reason));
    try {
      this.#options.onDemoted?.(reason, cutOff);
    } catch (error) {
      this.#settings.report(error);
    }
  }

  /** Campaigns until closed; errors back off, a lost session stands back. */
  async #run(): Promise<void> {
    const stop = this.#stop.signal;
    let attempt = 0;
    while (!stop.aborted) {
      let pauseMs = 100;
      try {
        // A replica that just lost its session stands back for a while, so that a healthy one takes over.
        if (await this.#campaign()) pauseMs = this.#standBackMs;
        attempt = 0;
      } catch (error) {
        if (stop.aborted) break;
        attempt += 1;
        this.#settings.report(error);
      }
      try {
        await sleep(attempt === 0 ? pauseMs : backoffMs(attempt, 250, 15_000), stop);
      } catch {
        break;
      }
    }
  }

  /** One session: create, renew, acquire/watch; resolves when the session is lost (true) or on close. */
  async #campaign(): Promise<boolean> {
    const settings = this.#settings;
    const { ttlSeconds, ttlMs, lockDelayMs } = settings;
    const stop = this.#stop.signal;
    const createdAt = Date.now();
    const id = await settings.consul.sessionCreate(
      { name: `svc leader ${hostname()}:${process.pid}`, ttl: `${ttlSeconds}s`, behavior: 'release', lockDelay: `${lockDelayMs}ms` },
      { signal: stop },
    );

    const session = new AbortController();
    const onStop = (): void => session.abort(new SessionEnded('closed'));
    stop.addEventListener('abort', onStop, { once: true });
    let held = false;
    let lost = false;
    /** Leadership (if any) goes first, then the session's loops stop. */
    const lose = (reason: string, cutOff = false): void => {
      held = false;
      lost = true;
      this.#demote(reason, cutOff);
      session.abort(new SessionEnded(reason));
    };
    // Consul may invalidate the session once no renew has succeeded for a whole TTL: step down then.
    let deadline: NodeJS.Timeout | undefined;
    const renewedAt = (sentAt: number): void => {
      clearTimeout(deadline);
      deadline = setTimeout(
        () => lose(`no session renewal succeeded for the TTL (${ttlSeconds}s)`, true),
        Math.max(0, sentAt + ttlMs - Date.now()),
      );
    };
    renewedAt(createdAt);
    const renewing = renewSession(settings, id, session.signal, renewedAt, lose);
    try {
      await watchLock(settings, id, session.signal, {
        isLeading: () => this.#leading !== null,
        sawLeader: (address) => {
          this.#leaderAddress = address;
        },
        acquired: () => {
          held = true;
          this.#elect();
        },
        lose,
      });
    } catch (error) {
      if (!session.signal.aborted) {
        lose('the election failed');
        throw error;
      }
    } finally {
      clearTimeout(deadline);
      stop.removeEventListener('abort', onStop);
      if (!session.signal.aborted) session.abort(new SessionEnded('done'));
      await renewing;
      this.#demote('closed');
      await abandonSession(settings, id, held && stop.aborted, stop);
    }
    return lost;
  }
}
