/** What the URL of a workload that is down on purpose answers (kept in its route entry). */
import { SvcError } from '../../model/errors.js';
import type { DeploymentRef } from '../../model/deployment-keys.js';

export function appPausedError(ref: DeploymentRef): SvcError {
  return new SvcError('app_paused', `the app ${ref.app} is paused.`, { hint: `Resume it (svc app resume ${ref.app}) or deploy it again.` });
}

export function deploymentStoppedError(ref: DeploymentRef, workload: string): SvcError {
  return new SvcError('deployment_stopped', `the deployment ${ref.app}/${workload} is stopped.`, {
    hint: `Deploy the workload again to start it.`,
  });
}

/** How long a client should wait before it retries a deployment svc starts again after its restart. */
const RESTARTING_RETRY_SECONDS = '5';

/**
 * What the URL of a deployed workload answers after svc restarted, until its container runs again (its
 * image may have to be built again first): the deployment is there, not yet served.
 */
export function restartingError(ref: DeploymentRef, workload: string): SvcError {
  return new SvcError(
    'starting',
    `the deployment ${ref.app}/${workload} is starting again after svc restarted (its image may be building).`,
    {
      hint: 'Retry after the Retry-After seconds: it serves as soon as its container is healthy.',
      headers: { 'Retry-After': RESTARTING_RETRY_SECONDS },
    },
  );
}

/** A workload that was running before svc restarted and could not be started again. */
export function notRestoredError(ref: DeploymentRef, workload: string, cause: unknown): SvcError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new SvcError('container_failed', `the deployment ${ref.app}/${workload} could not be started again after svc restarted: ${why}`, {
    hint: 'Deploy the app again; the server log has the details.',
  });
}

/** How long a client should wait before it retries while svc stops (it may be back by then, restored). */
const SHUTTING_DOWN_RETRY_SECONDS = '5';

/** What the URL of a workload that was serving answers while svc stops; requests already in flight finish. */
export function shuttingDownError(ref: DeploymentRef, workload: string): SvcError {
  return new SvcError('shutting_down', `svc is shutting down: the deployment ${ref.app}/${workload} is not served until it is back.`, {
    hint: 'Retry in a few seconds: svc serves the app again once it has restarted.',
    headers: { 'Retry-After': SHUTTING_DOWN_RETRY_SECONDS },
  });
}

/** A deployment change asked for while svc stops, or cut short by the stop (its cause kept). */
export function changeRefusedError(cause?: unknown): SvcError {
  return new SvcError('shutting_down', 'svc is shutting down and takes no deployment changes now.', {
    hint: 'Try again once svc is back; a change the stop cut short was not made.',
    headers: { 'Retry-After': SHUTTING_DOWN_RETRY_SECONDS },
    ...(cause === undefined ? {} : { cause }),
  });
}
