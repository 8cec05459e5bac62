/**
 * State keys of schedules, under `schedules/<workspace>/<app>/`:
 * `ticks/<function>` holds the last tick claimed (so that a tick runs once
 * across leaders) and `runs/<function>/<run id>` one run each.
 */
export function scheduleAppPrefix(workspace: string, app: string): string {
  return `schedules/${workspace}/${app}/`;
}

export function tickKey(workspace: string, app: string, fn: string): string {
  return `${scheduleAppPrefix(workspace, app)}ticks/${fn}`;
}

export function runsPrefix(workspace: string, app: string, fn?: string): string {
  return `${scheduleAppPrefix(workspace, app)}runs/${fn === undefined ? '' : `${fn}/`}`;
}

export function runKey(workspace: string, app: string, fn: string, id: string): string {
  return `${runsPrefix(workspace, app, fn)}${id}`;
}

export const RUN_ID_PATTERN = /^sched-[0-9]{13}-[0-9a-f]{6}$/;
