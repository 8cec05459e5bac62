/**
 * Usage: what the workspace's containers used over the last 7 days (core/services/usage): CPU seconds and
 * memory GiB-hours by app, and by day, as `svc usage` sums them. It changes nothing.
 */
import { sumUsage, type UsageRow } from '../../../services/usage/summary.js';
import { hourOf, usageHours } from '../../../services/usage/usage-meter.js';
import { html, type Html } from '../html.js';
import { page } from '../layout.js';
import { renderErrors, sendPage } from '../respond.js';
import type { Context } from '../session-cookie.js';
import type { DashboardServices } from '../types.js';
import { signedIn } from '../viewer.js';

const DAYS = 7;

export function usagePages(services: DashboardServices) {
  return {
    async show(ctx: Context): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const since = hourOf(Date.now() - (DAYS * 24 - 1) * 3_600_000);
        const hours = await usageHours(services.controlPlane.store, viewer.principal.workspace, since);
        const prices = services.usagePrices;
        const byApp = sumUsage(hours, 'app', prices);
        const byDay = sumUsage(hours, 'day', prices);
        const currency = prices?.currency ?? null;
        sendPage(
          ctx,
          page({
            title: 'Usage',
            section: 'usage',
            viewer,
            body: html`<section aria-labelledby="usage-apps">
  <h2 id="usage-apps">By app, the last ${String(DAYS)} days</h2>
  ${byApp.rows.length === 0 ? html`<p>No usage recorded yet.</p>` : usageTable('App', [...byApp.rows, { key: 'Total', ...byApp.total }], currency)}
</section>
<section aria-labelledby="usage-days">
  <h2 id="usage-days">By day</h2>
  ${byDay.rows.length === 0 ? html`<p>No usage recorded yet.</p>` : usageTable('Day (UTC)', byDay.rows, currency)}
</section>
<p class="help">CPU seconds and memory held, read from each container's cgroup every 15 s. <code>svc usage --by workload</code> shows each workload.</p>`,
          }),
        );
      });
    },
  };
}

/** `currency`: the operator's prices are set, so each row shows its cost too. */
function usageTable(first: string, rows: readonly UsageRow[], currency: string | null): Html {
  return html`<div class="scroll"><table>
    <thead><tr><th scope="col">${first}</th><th scope="col">CPU seconds</th><th scope="col">Memory GiB-hours</th>${
      currency === null ? '' : html`<th scope="col">Cost (${currency})</th>`
    }</tr></thead>
    <tbody>${rows.map(
      (row) =>
        html`<tr><th scope="row">${row.key}</th><td>${row.cpuSeconds.toFixed(1)}</td><td>${(row.memoryGiBSeconds / 3600).toFixed(3)}</td>${
          currency === null ? '' : html`<td>${(row.cost ?? 0).toFixed(4)}</td>`
        }</tr>`,
    )}</tbody>
  </table></div>`;
}
