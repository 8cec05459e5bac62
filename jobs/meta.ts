/**
 * What operators read in the Nomad UI and Consul: `Meta` (Consul-safe keys
 * `[a-z0-9_]`, values ≤ 512 characters, so the same map can go on the
 * services) and `UI.Description` (markdown, ≤ 1000 characters) with
 * `UI.Links` to the workload's URLs.
 */
import { hostUrl, workloadHost, workloadUrl } from '../core/model/urls.js';
import type { Workload } from '../core/model/workload/types.js';
import type { JobContext } from './context.js';
import type { JobUIConfig } from './types.js';

/** Meta of the job and of each service. */
export function jobMeta(workload: Workload, context: JobContext): Record<string, string> {
  const { scaling, http } = workload;
  const meta: Record<string, string> = {
    svc_workspace: context.workspace,
    svc_app: context.app,
    svc_stage: context.stage,
    svc_workload: workload.name,
    svc_kind: workload.kind,
    ...(context.version === null ? {} : { svc_version: String(context.version) }),
    svc_image: workload.image.id,
    svc_workers: String(scaling.workers),
    svc_concurrency: String(scaling.concurrency),
    svc_max_pending_tasks: String(scaling.maxPendingTasks),
    svc_keep_warm_seconds: String(scaling.keepWarmSeconds),
    svc_tasks_per_container: String(scaling.autoscaler.tasksPerContainer),
    svc_checkpoint: String(scaling.checkpointEnabled),
  };
  if (http !== null) {
    meta.svc_route = http.route;
    meta.svc_methods = http.methods.length === 0 ? '*' : http.methods.join(',');
    meta.svc_authorized = String(http.authorized);
  }
  if (context.bundle.sha256 !== null) meta.svc_bundle_sha256 = context.bundle.sha256;
  return meta;
}

const MAX_DESCRIPTION = 1000;

export function jobUi(workload: Workload, context: JobContext): JobUIConfig {
  const ref = { workspace: context.workspace, app: context.app, stage: context.stage };
  const { http, scaling } = workload;
  const what =
    http === null
      ? 'called with `.remote()` / `svc run`'
      : `${http.methods.length === 0 ? 'any method' : http.methods.join(', ')} \`${http.route}\`, ${http.authorized ? 'needs a bearer token' : 'public'}`;
  const lines = [
    `**svc ${workload.kind}** \`${workload.name}\` of app \`${context.app}\` (workspace \`${context.workspace}\`, ${context.stage}${context.version === null ? '' : `, version ${context.version}`}): ${what}.`,
    `${scaling.workers} worker${scaling.workers === 1 ? '' : 's'} × ${scaling.concurrency} per container, ${scaling.autoscaler.minContainers}–${scaling.autoscaler.maxContainers} containers, scaled by svc.`,
    'Managed by svc: changes made here are replaced on the next deploy.',
  ];
  if (workload.doc !== null) lines.splice(1, 0, '', `> ${workload.doc.split('\n')[0]!}`, '');
  let description = lines.join('\n');
  if (description.length > MAX_DESCRIPTION) description = `${description.slice(0, MAX_DESCRIPTION - 1)}…`;
  const ui: JobUIConfig = { Description: description };
  const { publicUrl, baseDomain } = context.cluster;
  if (publicUrl !== null && http !== null) {
    const links = [{ Label: 'URL', URL: workloadUrl(publicUrl, ref, workload.name, http.route) }];
    const host = baseDomain === null ? null : workloadHost(ref, workload.name, baseDomain);
    if (host !== null && 'host' in host) links.push({ Label: 'Host URL', URL: hostUrl(publicUrl, host.host, http.route) });
    ui.Links = links;
  }
  return ui;
}
