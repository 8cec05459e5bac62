/** What the Nomad driver is given (driver.ts): where Nomad is, how long to wait, where logs and exits go. */
import type { CsiVolumeOptions } from './csi-volumes.js';
import type { CallObserver } from '../../metrics/platform-metrics.js';
import type { LogSink } from '../types.js';
import type { CompileUnit } from './types.js';

export interface NomadDriverOptions {
  /** Told how long each non-blocking Nomad request took (`/metrics`). */
  readonly observe?: CallObserver | undefined;
  /** Nomad agent address, e.g. `http://127.0.0.1:4646`. */
  readonly url: string;
  /** ACL token (secret ID); see docs/operators.md for the policy it needs. */
  readonly token?: string | undefined;
  readonly namespace?: string | undefined;
  readonly region?: string | undefined;
  /** The job compiler (jobs/ `compileJob` with its context). */
  readonly compile: CompileUnit;
  /** How long `scale` waits for new allocations to become healthy (default 120 s). */
  readonly healthTimeoutMs?: number;
  /** How long `scale` down, `stop` and `remove` wait for allocations to stop (default 60 s). */
  readonly stopTimeoutMs?: number;
  /** The route every worker answers 200 on once ready (default `/_svc/health`). */
  readonly healthPath?: string;
  /** `wait` of the blocking queries (default 30 s). */
  readonly blockingWaitMs?: number;
  /** Bound on an ordinary request (default 30 s). */
  readonly requestTimeoutMs?: number;
  /**
   * Where every allocation's stdout and stderr lines go (read from Nomad's logs endpoint,
   * container = allocation ID), with the driver's own `system` lines (scale, stop choices).
   */
  readonly logs?: LogSink;
  /** How often the logs of a running allocation are read (default 500 ms). */
  readonly logPollMs?: number;
  /** At most this many new bytes per read of one stream of one allocation (default 256 KiB). */
  readonly logReadBytes?: number;
  /**
   * Called once when a healthy allocation ends by itself: Nomad `ClientStatus` failed or
   * complete while its `DesiredStatus` is still `run`, or lost (its node is down). Never for
   * scale-downs, `stop` or `remove`. Same shape as the local driver's, with only the unit's key.
   */
  readonly onContainerExit?: (unit: { key: string }, containerId: string, reason: string) => void;
  /**
   * Which svc installation this is (written into every job's `Meta.svc_install`):
   * `purgeUnknownJobs` only takes jobs of the same installation. Absent: it purges nothing.
   */
  readonly install?: string | undefined;
  /** The task driver of the compiled jobs: `raw_exec` runs tasks unisolated, which every deploy then says. */
  readonly taskDriver?: string | undefined;
  /** The nodes svc's volumes are registered on as host volumes (`nomadVolumeNodes`; empty: this machine's). */
  readonly volumeNodes?: readonly string[];
  /** When set, svc's volumes are CSI volumes of this plugin (`nomadCsiPlugin`) instead of host volumes. */
  readonly csi?: CsiVolumeOptions | undefined;
}
