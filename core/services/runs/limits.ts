/** The operator's bounds on remote runs (config `maxRunsPerWorkspace`, `classParameterSets`) and their defaults. */

export interface RunLimits {
  /** Runs one workspace may hold at once; each starts a container (it may scale to zero later, as any function). */
  readonly perWorkspace: number;
  /** Sets of parameters one class may run at once in a workspace: each is a run, a pool of containers of its own. */
  readonly parameterSetsPerClass: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = Object.freeze({ perWorkspace: 20, parameterSetsPerClass: 8 });
