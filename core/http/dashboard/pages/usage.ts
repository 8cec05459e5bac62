/**
 * Usage: what the workspace's containers used over the last 7 days (core/services/usage): CPU seconds and
 * memory GiB-hours per day as bar charts (svg-chart.ts), then by app and by day as tables, as `svc usage`
 * sums them. It changes nothing.
 */
import { formatBytes } from '../../../model/format-bytes.js';
import { NO_USAGE } from '../../../services/usage/figures.js';
import { sumUsage, type UsageRow } from '../../../services/usage/summary.js';
import { hourOf, usageHours } from '../../../services/usage/usage-meter.js';
import { html, type Html } from '../html.js';
import { svgChart } from '../svg-chart.js';
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
            body: html`<section aria-labelledby="usage-chart">
  <h2 id="usage-chart">Per day, the last ${String(DAYS)} days</h2>
  ${dayCharts(byDay.rows, Date.now())}
</section>
<section aria-labelledby="usage-apps">
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

/** CPU seconds and memory GiB-hours of each of the last DAYS days (UTC), a bar each; a day without usage is 0. */
function dayCharts(rows: readonly UsageRow[], now: number): Html {
  const days = Array.from({ length: DAYS }, (_, i) => new Date(now - (DAYS - 1 - i) * 86_400_000).toISOString().slice(0, 10));
  const used = new Map(rows.map((row) => [row.key, row]));
  const values = (figure: (row: UsageRow) => number) =>
    days.map((day) => (rows.length === 0 ? null : figure(used.get(day) ?? { key: day, ...NO_USAGE })));
  const frame = {
    kind: 'bars',
    columns: days.map((day) => day.slice(5)),
    ticks: days.map((_, i) => i),
    empty: 'No usage recorded yet',
  } as const;
  return html`<div class="charts">${svgChart({
    ...frame,
    id: 'chart-cpu',
    title: 'CPU seconds per day (UTC)',
    unit: 'CPU s',
    series: [{ label: 'CPU seconds', tone: 'blue', values: values((row) => row.cpuSeconds) }],
  })}${svgChart({
    ...frame,
    id: 'chart-memory',
    title: 'Memory GiB-hours per day (UTC)',
    unit: 'GiB-h',
    series: [{ label: 'memory GiB-hours', tone: 'purple', values: values((row) => row.memoryGiBSeconds / 3600) }],
  })}</div>`;
}

/** `currency`: the operator's prices are set, so each row shows its cost too. */
function usageTable(first: string, rows: readonly UsageRow[], currency: string | null): Html {
  return html`<div class="scroll"><table>
    <thead><tr><th scope="col">${first}</th><th scope="col">CPU seconds</th><th scope="col">Memory GiB-hours</th><th scope="col">Reserved GiB-hours</th><th scope="col">Requests</th><th scope="col">Calls</th><th scope="col">In</th><th scope="col">Out</th>${
      currency === null ? '' : html`<th scope="col">Cost (${currency})</th>`
    }</tr></thead>
    <tbody>${rows.map(
      (row) =>
        html`<tr><th scope="row">${row.key}</th><td>${row.cpuSeconds.toFixed(1)}</td><td>${(row.memoryGiBSeconds / 3600).toFixed(3)}</td><td>${(row.memoryReservedGiBSeconds / 3600).toFixed(3)}</td><td>${String(row.requests)}</td><td>${String(row.calls)}</td><td>${formatBytes(row.bytesIn)}</td><td>${formatBytes(row.bytesOut)}</td>${
          currency === null ? '' : html`<td>${(row.cost ?? 0).toFixed(4)}</td>`
        }</tr>`,
    )}</tbody>
  </table></div>`;
}
