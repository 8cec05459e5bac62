/**
 * What `svc serve` prints on stdout once a preview is live: each workload
 * with its URL and a curl line. Printed again when a reload changes the URLs
 * (a workload added or removed, the app renamed).
 */
import type { Deployment } from '../../core/deployments/types.js';
import { curlExample } from '../curl-example.js';
import type { Output } from '../output.js';

export function printSummary(out: Output, deployment: Deployment, tokenExpression: string): void {
  const { bold, dim } = out.color;
  out.result();
  out.result(`${bold(`Preview of ${deployment.ref.app} is live.`)}`);
  for (const workload of deployment.workloads) {
    out.result();
    const access = workload.kind === 'function' ? '' : workload.authorized ? 'needs a bearer token' : 'public';
    out.result(`  ${bold(workload.name)}  ${dim(workload.kind)}  ${workload.methods.join(', ')}  ${dim(access)}`.replace(/ {3,}/g, '  ').trimEnd());
    if (workload.url) {
      out.result(`    ${workload.url}`);
      if (workload.hostUrl) out.result(`    ${workload.hostUrl}`);
      const example = curlExample(workload, { tokenExpression });
      if (example) out.result(`    ${example}`);
      else if (workload.kind === 'realtime') {
        const auth = workload.authorized ? `send "Authorization: Bearer ${tokenExpression}", or ?token=<token> from a browser` : 'no token needed';
        out.result(`    ${dim(`connect with any WebSocket client; ${auth}`)}`);
      }
    } else if (workload.kind === 'function') {
      out.result(`    ${dim('a function is not served over HTTP; remote calls (svc run, .remote()) are not available in this version yet')}`);
    } else if (workload.note) {
      out.result(`    ${dim(workload.note)}`);
    }
  }
  out.result();
}

/** What the summary shows, to tell whether a reload changed it. */
export function summaryKey(deployment: Deployment): string {
  return JSON.stringify([deployment.ref.app, deployment.workloads.map((w) => [w.name, w.kind, w.methods, w.authorized, w.url, w.hostUrl ?? null])]);
}
