import { DEFAULT_WORKSPACE, type DeploymentRef } from '../deployments/keys.js';

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

const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Host-based workload URLs, when a base domain is configured:
 * `<app>-<workload>.<base domain>`, with `--preview` after it for a preview
 * and `--<workspace>` last outside the default workspace. Names are lower-cased
 * and `_` becomes `-`, since DNS labels allow neither upper case nor `_`.
 * Returns why not when the result is no valid DNS label (over 63 characters,
 * or ending in `-`): the path URL is then the only one.
 */
export function workloadHost(ref: DeploymentRef, workload: string, baseDomain: string): { host: string } | { problem: string } {
  let label = `${ref.app}-${workload}`;
  if (ref.stage === 'preview') label += '--preview';
  if (ref.workspace !== DEFAULT_WORKSPACE) label += `--${ref.workspace}`;
  label = label.toLowerCase().replaceAll('_', '-');
  if (!DNS_LABEL.test(label)) {
    const why = label.length > 63 ? `is ${label.length} characters long (DNS allows 63)` : 'is not a valid DNS label (letters, digits and inner hyphens only)';
    return { problem: `its host name ${label}.${baseDomain} ${why}` };
  }
  return { host: `${label}.${baseDomain}` };
}

/** The base URL with its host name replaced: `http://127.0.0.1:7420` + `a-b.localhost` → `http://a-b.localhost:7420`. */
export function hostUrl(baseUrl: string, host: string, route: string): string {
  const url = new URL(baseUrl);
  url.hostname = host;
  return `${url.origin}${route === '/' ? '' : route}`;
}
