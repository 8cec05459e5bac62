import type { DeploymentRef } from '../deployments/keys.js';

/**
 * Path-based workload URLs: `/<workspace>/<app>/<workload>` followed by the
 * endpoint's route. A preview (svc serve) lives beside the deployment at
 * `/<workspace>/<app>--preview/<workload>`, so both can run at once.
 */
export function workloadPrefix(ref: DeploymentRef, workload: string): string {
  const app = ref.stage === 'preview' ? `${ref.app}--preview` : ref.app;
  return `/${ref.workspace}/${app}/${workload}`;
}

/** The full URL a user calls: base URL + prefix + route ("/" adds nothing). */
export function workloadUrl(baseUrl: string, ref: DeploymentRef, workload: string, route: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  return `${base}${workloadPrefix(ref, workload)}${route === '/' ? '' : route}`;
}
