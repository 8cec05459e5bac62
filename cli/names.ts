/**
 * How the CLI names things: a deployment is `<app>/<workload>` (or
 * `<app>:<workload>`), `svc logs` takes `<app>[:<workload>]`, and `svc deploy`
 * takes `<file or module>[:<workload>]`.
 */
import { SvcError } from '../core/model/errors.js';

export interface DeploymentName {
  readonly app: string;
  readonly workload: string;
}

/** `app/workload` or `app:workload`; `usage_invalid` otherwise. */
export function parseDeploymentName(text: string): DeploymentName {
  const match = /^([^/:\s]+)[/:]([^/:\s]+)$/.exec(text.trim());
  if (match === null) {
    throw new SvcError('usage_invalid', `a deployment is named <app>/<workload> (or <app>:<workload>), got ${JSON.stringify(text)}.`, {
      hint: '`svc deployment list` lists them by name.',
    });
  }
  return { app: match[1]!, workload: match[2]! };
}

/** `app` or `app:workload` (also `app/workload`). */
export function parseAppTarget(text: string): { app: string; workload: string | null } {
  const value = text.trim();
  if (value !== '' && !/[/:\s]/.test(value)) return { app: value, workload: null };
  try {
    return parseDeploymentName(value);
  } catch {
    throw new SvcError('usage_invalid', `expected <app> or <app>:<workload>, got ${JSON.stringify(text)}.`, {
      hint: '`svc app list` lists your apps.',
    });
  }
}

/**
 * `svc deploy`'s target: a .py file or a module name, then optionally
 * `:<workload>`. The workload is what follows the last colon, when there is
 * something before it (so a path with a drive letter or a colon in a folder
 * name still works when no workload is given and it ends in .py).
 */
export function parseDeployTarget(text: string): { target: string; workload: string | null } {
  const value = text.trim();
  const colon = value.lastIndexOf(':');
  if (colon <= 0 || colon === value.length - 1) return { target: value, workload: null };
  const rest = value.slice(colon + 1);
  if (rest.includes('/') || rest.includes('\\') || rest.endsWith('.py')) return { target: value, workload: null };
  return { target: value.slice(0, colon), workload: rest };
}
