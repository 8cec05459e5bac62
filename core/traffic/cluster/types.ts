/** Types of leader election among svc server replicas (core/traffic/cluster/leader.ts). */
import type { CallObserver } from '../../infra/metrics/platform-metrics.js';

export interface LeaderElectionOptions {
  readonly consul: {
    /** Base URL of the Consul agent, e.g. `http://127.0.0.1:8500`. */
    readonly address: string;
    /** ACL token (needs `session_prefix "" { policy = "write" }` and write on the key). */
    readonly token?: string;
    /** Told how long each non-blocking Consul call took (`/metrics`). */
    readonly observe?: CallObserver | undefined;
  };
  /** The lock key (default `svc/leader`). Its value names the holder: hostname, pid, address. */
  readonly key?: string;
  /** Session TTL in seconds (default 15; Consul accepts 10 to 86400). Renewed every TTL/3. */
  readonly ttlSeconds?: number;
  /** Lock-delay of the session in seconds (default 1): how long the key stays unacquirable after the session is invalidated. */
  readonly lockDelaySeconds?: number;
  /** This replica's address, written into the lock key's value so operators can see who leads. */
  readonly advertise?: string;
  /**
   * Called when this replica becomes the leader. `signal` aborts (with a `LeadershipLostError`)
   * as soon as leadership is lost; work started here must stop then. Errors are reported.
   */
  readonly onElected: (signal: AbortSignal) => void | Promise<void>;
  /**
   * Called after `signal` aborted, with the reason leadership was lost (`closed` on close()).
   * `cutOff`: Consul stopped answering (no renewal for a TTL), so nothing says another replica leads.
   */
  readonly onDemoted?: (reason: string, cutOff: boolean) => void;
  /** Errors talking to Consul (the election backs off and retries) and from the callbacks. */
  readonly report?: (error: unknown) => void;
}

export interface LeaderElection {
  /** True between `onElected` and the abort of its signal. */
  isLeader(): boolean;
  /** The leader's advertised address as the lock key shows it (this replica's own while it leads); null when none is known. */
  leaderAddress(): string | null;
  /** Steps down (aborting the signal first), releases the lock and destroys the session. */
  close(): Promise<void>;
}

/** The reason of a leader's AbortSignal. */
export class LeadershipLostError extends Error {
  constructor(readonly reason: string) {
    super(`leadership lost: ${reason}`);
    this.name = 'LeadershipLostError';
  }
}
