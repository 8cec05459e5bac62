/** What the URL of a workload that is down on purpose answers (kept in its route entry). */
import { SvcError } from '../errors.js';
import type { DeploymentRef } from './keys.js';

export function appPausedError(ref: DeploymentRef): SvcError {
  return new SvcError('app_paused', `the app ${ref.app} is paused.`, { hint: `Resume it (svc app resume ${ref.app}) or deploy it again.` });
}

export function deploymentStoppedError(ref: DeploymentRef, workload: string): SvcError {
  return new SvcError('deployment_stopped', `the deployment ${ref.app}/${workload} is stopped.`, { hint: `Deploy the workload again to start it.` });
}

/** A workload that was running before svc restarted and could not be started again. */
export function notRestoredError(ref: DeploymentRef, workload: string, cause: unknown): SvcError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new SvcError('container_failed', `the deployment ${ref.app}/${workload} could not be started again after svc restarted: ${why}`, {
    hint: 'Deploy the app again; the server log has the details.',
  });
}
