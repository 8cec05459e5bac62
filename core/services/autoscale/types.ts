import type { ContainerGpu, ContainerState, LogLine } from '../../infra/scheduler/types.js';
import type { LastExit } from './crash-tracker.js';

/**
 * - `ready`: at least one container serves;
 * - `starting`: none serves yet, one is starting (or due to start after a back-off);
 * - `crash_loop`: none serves and the last starts failed in a row: requests get 503 `crash_loop`;
 * - `idle`: scaled to zero; the next request starts a container.
 */
export type ScalingState = 'ready' | 'idle' | 'starting' | 'crash_loop';

export interface ContainerScalingStatus {
  readonly id: string;
  readonly state: ContainerState;
  readonly startedAt: Date;
  /** Requests in flight on its workers. */
  readonly inFlight: number;
  /** When it last took or finished a request; null if it never did. */
  readonly lastActiveAt: Date | null;
  /** The GPUs it holds or waits for (absent: none asked, or the driver does not tell). */
  readonly gpu?: ContainerGpu;
}

/** What the control plane shows of a deployment unit's scaling (`Autoscaler#status()`). */
export interface UnitScalingStatus {
  readonly unit: string;
  /** The scaling policy's name. */
  readonly policy: string;
  readonly state: ScalingState;
  /** What the last evaluation wanted, within [min_containers, max_containers]. */
  readonly desired: number;
  readonly containers: readonly ContainerScalingStatus[];
  readonly inFlight: number;
  readonly queued: number;
  /** Consecutive container failures (exits and failed starts) since one last stayed healthy. */
  readonly failures: number;
  /** The back-off the last failure set before the next start (0 without failures). */
  readonly backoffMs: number;
  readonly lastExit: LastExit | null;
  /** The unit's last log lines, oldest first. Never sent to workload clients. */
  readonly recentLogs: readonly LogLine[];
}

/**
 * What the other svc replicas' gateways hold (core/traffic/cluster/peer-load.ts): the
 * leader's autoscaler adds it to its own admission's numbers. Times are on
 * this replica's clock.
 */
export interface PeerLoadView {
  /** Requests in flight and queued for a unit on the other replicas. */
  load(unit: string): { inFlight: number; queued: number };
  /** One instance's use on the other replicas; `lastActiveAt` in ms since the epoch, undefined if none used it. */
  use(instanceId: string): { inFlight: number; lastActiveAt: number | undefined };
}
