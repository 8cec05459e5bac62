/** The Nomad job compiler, validator and types, for the Nomad driver and `svc jobs render` (core/infra/scheduler/nomad runs the plugins' transformJob over them). */
export { compileJob } from './compile.js';
export { compilePeriodicJob, nomadCronSpec } from './periodic.js';
export { formatIssues, validateJob } from './validate.js';
export { jobId, workerPortLabels } from './names.js';
export { DEFAULT_MHZ_PER_CORE, defaultClusterSettings } from './context.js';
export type { ClusterSettings, JobContext } from './context.js';
export type * from './types.js';
