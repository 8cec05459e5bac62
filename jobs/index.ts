/** The Nomad job compiler, validator and types, for the Nomad driver and `svc jobs render`. */
export { compileJob } from './compile.js';
export { validateJob } from './validate.js';
export { transformJob, formatIssues } from './transform.js';
export { jobId, workerPortLabels } from './names.js';
export { DEFAULT_MHZ_PER_CORE, defaultClusterSettings } from './context.js';
export type { ClusterSettings, JobContext } from './context.js';
export type * from './types.js';
