import { DEFAULT_WORKSPACE, type DeploymentRef } from './workload/deployment-ref.js';

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
 *
 * `--` only ever separates those suffixes: an app or workload name that would
 * put one into `<app>-<workload>` (`b__x`, `a--b`), a workspace whose name holds
 * one or is `preview`, gets no host URL. Otherwise app `a` with workload `b__x`
 * of one workspace would take `a-b--x`, the host of app `a`, workload `b` of
 * workspace `x`, and receive its callers' requests and tokens.
 */
export function workloadHost(ref: DeploymentRef, workload: string, baseDomain: string): { host: string } | { problem: string } {
  const base = `${ref.app}-${workload}`.toLowerCase().replaceAll('_', '-');
  if (base.includes('--')) {
    return {
      problem: `its host name would contain "--" (from ${ref.app} and ${workload}), which host names keep for the --preview and --<workspace> suffixes`,
    };
  }
  if (ref.workspace !== DEFAULT_WORKSPACE && (ref.workspace.includes('--') || ref.workspace === 'preview')) {
    return { problem: `the workspace name ${ref.workspace} cannot be a host name suffix (it holds "--" or is "preview")` };
  }
  let label = base;
  if (ref.stage === 'preview') label += '--preview';
  if (ref.workspace !== DEFAULT_WORKSPACE) label += `--${ref.workspace}`;
  if (!DNS_LABEL.test(label)) {
    const why =
      label.length > 63
        ? `is ${label.length} characters long (DNS allows 63)`
        : 'is not a valid DNS label (letters, digits and inner hyphens only)';
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
