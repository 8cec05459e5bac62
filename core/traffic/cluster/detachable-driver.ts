/**
 * A scheduler driver that can let go of its workloads. A replica that lost
 * the leadership must not stop them: the new leader has adopted (or is about
 * to purge) those jobs. After `detach()`, the platform closes as usual — the
 * drains, the manager's shutdown — but nothing reaches the scheduler any
 * more: stop and remove resolve at once, status is empty, and a start
 * (submit, scale) fails with `not_leader` rather than claim it ran.
 */
import { SvcError } from '../../model/errors.js';
import type { SchedulerDriver } from '../../infra/scheduler/types.js';

export interface DetachableDriver extends SchedulerDriver {
  detach(): void;
}

export function detachable(driver: SchedulerDriver): DetachableDriver {
  let detached = false;
  return {
    get name() {
      return driver.name;
    },
    get resourceLimits() {
      return driver.resourceLimits;
    },
    crashCause: (instanceId) => (detached ? undefined : driver.crashCause?.(instanceId)),
    submit: (unit) => (detached ? Promise.reject(lostError()) : driver.submit(unit)),
    scale: (key, count) => (detached ? Promise.reject(lostError()) : driver.scale(key, count)),
    stop: (key, id) => (detached ? Promise.resolve() : driver.stop(key, id)),
    remove: (key) => (detached ? Promise.resolve() : driver.remove(key)),
    status: (key) => (detached ? [] : driver.status(key)),
    close: () => driver.close(),
    ...(driver.plan === undefined ? {} : { plan: (unit) => (detached ? Promise.reject(lostError()) : driver.plan!(unit)) }),
    ...(driver.rescale === undefined ? {} : { rescale: (unit) => (detached ? Promise.reject(lostError()) : driver.rescale!(unit)) }),
    ...(driver.usage === undefined ? {} : { usage: (key) => (detached ? new Map() : driver.usage!(key)) }),
    // Detached, the GPUs are the new leader's to tell of; the local driver never detaches (one replica), so this is for form.
    ...(driver.gpus === undefined ? {} : { gpus: () => (detached ? { models: [], waiting: [], held: new Map() } : driver.gpus!()) }),
    ...(driver.exec === undefined
      ? {}
      : { exec: (key, id, request) => (detached ? Promise.reject(lostError()) : driver.exec!(key, id, request)) }),
    ...(driver.terminal === undefined
      ? {}
      : {
          terminal: (key, id, request) => {
            if (detached) throw lostError();
            return driver.terminal!(key, id, request);
          },
        }),
    detach() {
      detached = true;
    },
  };
}

function lostError(): SvcError {
  return new SvcError('not_leader', 'this svc replica lost the leadership: another replica runs the workloads now.', {
    headers: { 'Retry-After': '1' },
  });
}
