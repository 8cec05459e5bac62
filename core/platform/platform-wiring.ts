/**
 * What every stage of building the platform (core/platform/platform-services.ts)
 * reads: its options and control plane, what only a started platform knows,
 * and how to log and report.
 */
import type { ServerConfig } from '../../config/schema.js';
import type { ControlPlane } from '../http/api/control-plane.js';
import type { AgentWatches } from './agent-watches.js';
import type { ReplicaRole } from '../traffic/cluster/replica-gate.js';
import type { LeaderElection } from '../traffic/cluster/types.js';
import type { ErrorReporter } from '../traffic/gateway/error-middleware.js';
import type { MetricsListener } from '../http/metrics/metrics-listener.js';
import type { PlatformMetrics } from '../infra/metrics/platform-metrics.js';
import type { PlatformOptions } from './platform-options.js';

/** What only a started platform knows; the objects built here read it when they need it. */
export interface PlatformState {
  /** The gateway's base URL (the public URL, else the listening address); '' until it listens. */
  url: string;
  /** This replica's own address, where followers forward the API while it leads; '' until it listens. */
  self: string;
  /** The leader election among replicas (`state: consul`); null until it starts, and always without one. */
  leader: LeaderElection | null;
  /** This replica's phase while it leads; null while it does not (a follower's role comes from its route copy). */
  leaderRole: ReplicaRole | null;
  /** The metrics listener (`metricsAddress`), once it listens; null without one. */
  metricsListener: MetricsListener | null;
}

export interface Wiring {
  readonly options: PlatformOptions;
  readonly config: ServerConfig;
  readonly controlPlane: ControlPlane;
  readonly state: PlatformState;
  readonly metrics: PlatformMetrics;
  readonly report: ErrorReporter;
  /** A reporter for failures of one background job, named like a request method in the report (`'AUTOSCALE'`). */
  readonly reportAs: (method: string) => (error: unknown) => void;
  /** A line of svc's own in the log (stream `system`). */
  readonly system: (text: string) => void;
}

/**
 * A reporter that keeps quiet while Consul is known to be away: the outage's own log line
 * says it once, where every watch, renewal and retry would say it again and again.
 */
export function quietWithoutConsul(agents: AgentWatches, report: (error: unknown) => void): (error: unknown) => void {
  return (error) => {
    if (agents.consul?.outage() == null) report(error);
  };
}
