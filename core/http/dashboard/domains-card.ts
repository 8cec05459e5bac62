/**
 * The Workspace page's card of custom domains: each with its status, the
 * workload it serves, and for a pending one the TXT record to publish.
 */
import type { DomainView } from '../../model/domains/types.js';
import { html, type Html } from './html.js';

export function domainsCard(domains: readonly DomainView[] | null, plan: string): Html {
  const body =
    domains === null
      ? html`<p class="help">Custom domains are not available on this server.</p>`
      : domains.length === 0
        ? html`<p class="help">No custom domains. A deploy with <code>domain="api.example.com"</code> on a workload claims one (team and business plans; this workspace is on ${plan}).</p>`
        : html`<div class="scroll"><table>
  <caption class="visually-hidden">Custom domains</caption>
  <thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">Serves</th><th scope="col">Record to publish</th></tr></thead>
  <tbody>${domains.map((d) => html`<tr><td><code>${d.domain}</code></td><td>${d.status}${d.reason === null ? '' : html`<br><span class="help">${d.reason}</span>`}</td><td>${d.app}/${d.workload}</td><td>${d.status === 'pending' ? html`<code>${d.record.name}</code> ${d.record.type} <code>${d.record.value}</code>` : ''}</td></tr>`)}</tbody>
</table></div>
<p class="help">Publish the TXT record at your DNS provider, then run <code>svc domain verify &lt;domain&gt;</code>.</p>`;
  return html`<section class="card" aria-labelledby="domains">
  <h2 id="domains">Custom domains</h2>
  ${body}
</section>`;
}
