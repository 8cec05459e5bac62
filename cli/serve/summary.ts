/**
 * What `svc serve` prints on stdout once a preview is live: each workload
 * with its URL and a curl line. Printed again when a reload changes the URLs
 * (a workload added or removed, the app renamed). The preview comes from the
 * embedded platform (a Deployment) or from a server's answer (an app view,
 * completed by the manifest: methods, access and parameters).
 */
import type { DeploymentView } from '../../core/http/api/app-view.js';
import type { DeployedWorkload, Deployment } from '../../core/services/deployments/types.js';
import type { AppSpec } from '../../core/model/workload/types.js';
import { curlExample } from '../curl-example.js';
import type { Output } from '../output.js';

/** What the summary shows of a preview. */
export interface PreviewSummary {
  readonly app: string;
  readonly workloads: readonly DeployedWorkload[];
}

/** How the curl lines send the token, and what to say about it (never the secret itself). */
export interface TokenHint {
  /** A shell expression that yields the token: `$SVC_TOKEN`, `$(cat …/owner-token)`, or a placeholder. */
  readonly expression: string;
  /** Said once above the workloads when one needs a token (how to fill in a placeholder). */
  readonly note?: string;
}

export function summaryOfDeployment(deployment: Deployment): PreviewSummary {
  return { app: deployment.ref.app, workloads: deployment.workloads };
}

/** A server's view of the preview, with what only the manifest says (methods, access, parameters). */
export function summaryOfView(app: string, deployments: readonly DeploymentView[], spec: AppSpec): PreviewSummary {
  const specs = new Map(spec.workloads.map((w) => [w.name, w]));
  return {
    app,
    workloads: deployments.map((d): DeployedWorkload => {
      const workload = specs.get(d.workload);
      return {
        name: d.workload,
        kind: d.kind,
        url: d.urls.path,
        hostUrl: d.urls.host,
        methods: workload?.http?.methods ?? [],
        authorized: workload?.http?.authorized ?? true,
        parameters: workload?.parameters ?? null,
        note: d.urls.path === null && d.kind !== 'function' ? `${d.kind} workloads are not served by this server yet` : null,
        status: d.status,
        version: d.version,
        unit: null,
        api: null,
      };
    }),
  };
}

export function printSummary(out: Output, preview: PreviewSummary, token: TokenHint): void {
  const { bold, dim } = out.color;
  const tokenExpression = token.expression;
  out.result();
  out.result(`${bold(`Preview of ${preview.app} is live.`)}`);
  if (token.note && preview.workloads.some((w) => w.url && w.authorized)) out.result(`  ${dim(token.note)}`);
  for (const workload of preview.workloads) {
    out.result();
    const access = workload.kind === 'function' ? '' : workload.authorized ? 'needs a bearer token' : 'public';
    out.result(
      `  ${bold(workload.name)}  ${dim(workload.kind)}  ${workload.methods.join(', ')}  ${dim(access)}`.replace(/ {3,}/g, '  ').trimEnd(),
    );
    if (workload.url) {
      out.result(`    ${workload.url}`);
      if (workload.hostUrl) out.result(`    ${workload.hostUrl}`);
      const example = curlExample(workload, { tokenExpression });
      if (example) out.result(`    ${example}`);
      else if (workload.kind === 'realtime') {
        const auth = workload.authorized
          ? `send "Authorization: Bearer ${tokenExpression}", or ?token=<token> from a browser`
          : 'no token needed';
        out.result(`    ${dim(`connect with any WebSocket client; ${auth}`)}`);
      }
    } else if (workload.kind === 'function') {
      out.result(
        `    ${dim(`not served over HTTP: call it with \`svc run <app file>:${workload.name} <args>\`, or ${workload.name}.remote(...) from Python`)}`,
      );
    } else if (workload.note) {
      out.result(`    ${dim(workload.note)}`);
    }
  }
  out.result();
}

/** What the summary shows, to tell whether a reload changed it. */
export function summaryKey(preview: PreviewSummary): string {
  return JSON.stringify([preview.app, preview.workloads.map((w) => [w.name, w.kind, w.methods, w.authorized, w.url, w.hostUrl ?? null])]);
}
