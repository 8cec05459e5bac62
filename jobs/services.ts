/**
 * One Consul service per worker port, all under the job's name (Nomad keys
 * services by name and port label, and Consul IDs them per port:
 * `_nomad-task-<alloc>-runtime-<name>-w0`), each with an HTTP check on the
 * runtime's `/_svc/health`. Tags: svc's own (`svc`, `svc-app=…`), and for
 * routed workloads Fabio `urlprefix-` and Traefik router tags.
 */
import { workloadHost, workloadPrefix } from '../core/model/urls.js';
import type { Workload } from '../core/model/workload/types.js';
import type { JobContext } from './context.js';
import { seconds } from './durations.js';
import type { Service } from './types.js';

export const HEALTH_PATH = '/_svc/health';

export function workerServices(
  workload: Workload,
  context: JobContext,
  name: string,
  labels: readonly string[],
  meta: Record<string, string>,
): Service[] {
  const tags = [...svcTags(workload, context), ...routingTags(workload, context, name)];
  return labels.map((label) => ({
    Name: name,
    PortLabel: label,
    Provider: 'consul',
    Tags: [...tags, `svc-worker=${label}`],
    Meta: { ...meta, svc_worker: label },
    Checks: [
      {
        Name: `health-${label}`,
        Type: 'http',
        Path: HEALTH_PATH,
        Protocol: 'http',
        PortLabel: label,
        Method: 'GET',
        Interval: seconds(5),
        Timeout: seconds(2),
        // Restart the task when a worker stays unhealthy (after its start-up grace).
        CheckRestart: { Limit: 3, Grace: seconds(60), IgnoreWarnings: true },
      },
    ],
  }));
}

function svcTags(workload: Workload, context: JobContext): string[] {
  return [
    'svc',
    `svc-workspace=${context.workspace}`,
    `svc-app=${context.app}`,
    `svc-stage=${context.stage}`,
    `svc-workload=${workload.name}`,
    `svc-kind=${workload.kind}`,
    ...(context.version === null ? [] : [`svc-version=${context.version}`]),
  ];
}

/**
 * Fabio: `urlprefix-<path prefix> strip=<path prefix>` (the runtime serves
 * the route without svc's prefix) and `urlprefix-<host>/` with a base domain.
 * Traefik: `traefik.enable=true`, a `Host()` router with a base domain, and a
 * `PathPrefix()` router with a stripprefix middleware. A deployed workload's
 * custom domain gets its own `urlprefix-<domain>/` and `Host()` router: the
 * whole host, at the root, as svc's gateway serves it. (A deploy reaches the
 * compiler only after svc:custom-domains claimed the name for the workspace.)
 */
export function routingTags(workload: Workload, context: JobContext, name: string): string[] {
  const { proxyTags, baseDomain } = context.cluster;
  if (workload.http === null || proxyTags === 'none') return [];
  if (proxyTags === 'public' && workload.http.authorized) return [];
  const ref = { workspace: context.workspace, app: context.app, stage: context.stage };
  const prefix = workloadPrefix(ref, workload.name);
  const host = baseDomain === null ? null : workloadHost(ref, workload.name, baseDomain);
  const tags = [`urlprefix-${prefix} strip=${prefix}`];
  if (host !== null && 'host' in host) tags.push(`urlprefix-${host.host}/`);
  tags.push('traefik.enable=true');
  if (host !== null && 'host' in host) tags.push(`traefik.http.routers.${name}.rule=Host(\`${host.host}\`)`);
  const domain = context.stage === 'deployed' ? workload.http.domain?.trim().toLowerCase().replace(/\.$/, '') : undefined;
  if (domain) tags.push(`urlprefix-${domain}/`, `traefik.http.routers.${name}-domain.rule=Host(\`${domain}\`)`);
  tags.push(
    `traefik.http.routers.${name}-path.rule=PathPrefix(\`${prefix}\`)`,
    `traefik.http.routers.${name}-path.middlewares=${name}-strip`,
    `traefik.http.middlewares.${name}-strip.stripprefix.prefixes=${prefix}`,
  );
  return tags;
}
