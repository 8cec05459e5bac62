/** The exported types of core/infra/logs: deployment log lines, their keys, followers and options. */

export interface DeploymentLogLine {
  /** ISO 8601. */
  readonly time: string;
  /** The container id; `build` for image build lines. */
  readonly container: string;
  readonly stream: 'stdout' | 'stderr' | 'system';
  readonly text: string;
  readonly version?: number;
}

export interface DeploymentLogKey {
  readonly workspace: string;
  readonly app: string;
  readonly stage: string;
  readonly workload: string;
}

/** What a follower gets: each new line, then `end` once (deployment deleted, or svc stopping). */
export interface LogSubscriber {
  line(line: DeploymentLogLine): void;
  end(reason: 'deleted' | 'closing'): void;
}

export interface DeploymentLogLimits {
  readonly maxLines?: number;
  readonly maxBytes?: number;
  readonly maxLineBytes?: number;
}

export interface DeploymentLogOptions extends DeploymentLogLimits {
  /** Where the lines of deployed deployments are kept across restarts; none keeps them in memory only. */
  readonly dir?: string;
  /** Told of a file error (once per run of failures); the lines stay in memory. */
  readonly report?: (error: unknown) => void;
}
