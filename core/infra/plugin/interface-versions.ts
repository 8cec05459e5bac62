/**
 * How a generated client names the deployment it came from: `greet v1,
 * hello v2`, for headers and messages. Part of `svc/plugin`.
 */
import type { AppInterface } from './types.js';

/** `greet v1, hello v2`, in the interface's order; '' for an app without workloads. */
export function versionsText(generatedFrom: AppInterface['generatedFrom']): string {
  return Object.entries(generatedFrom.versions)
    .map(([name, version]) => `${name} v${version}`)
    .join(', ');
}
