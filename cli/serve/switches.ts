/** svc serve's own switches from the environment, checked like every other (config/env-switch.ts). */
import { envSwitch } from '../../config/env-switch.js';

/** SVC_SERVE_WARM: a warm Python helper reads each saved version (default on). */
export function warmReads(env: NodeJS.ProcessEnv = process.env): boolean {
  return envSwitch(
    { name: 'SVC_SERVE_WARM', fallback: true, off: 'read each save with a new Python process', on: 'read saves with a warm Python helper' },
    env.SVC_SERVE_WARM,
  );
}

/** SVC_SERVE_TIMINGS: each reload line says where its time went (default off). */
export function reloadTimings(env: NodeJS.ProcessEnv = process.env): boolean {
  return envSwitch(
    { name: 'SVC_SERVE_TIMINGS', fallback: false, off: 'keep reload lines short', on: 'add where the time went to each reload line' },
    env.SVC_SERVE_TIMINGS,
  );
}
