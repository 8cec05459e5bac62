/**
 * The app page's "Scheduled runs" card: each scheduled function with its
 * schedule and next tick, then the latest runs with their status, and a page
 * of one run's logs. Read from the state store like `GET /api/v1/apps/:app/runs`.
 */
import type { ScheduledRun, ScheduledRunSummary } from '../../services/schedules/types.js';
import type { Deployment } from '../../services/deployments/types.js';
import { describeSchedule, nextTick } from '../../model/workload/schedule.js';
import { html, type Html } from './html.js';

/** Runs the card shows; `svc app runs` lists every run kept. */
const SHOWN_RUNS = 20;

const TONES: Record<ScheduledRunSummary['status'], string> = { running: 'busy', succeeded: 'ok', failed: 'bad', skipped: 'down' };

export function scheduledRunsCard(deployment: Deployment, runs: readonly ScheduledRunSummary[]): Html | '' {
  const scheduled = deployment.spec.workloads.filter((w) => w.schedule);
  if (scheduled.length === 0 && runs.length === 0) return '';
  const app = deployment.ref.app;
  const now = new Date();
  const schedules = html`<ul>${scheduled.map((w) => html`<li><code>${w.name}</code>: ${describeSchedule(w.schedule!)}; next run ${deployment.paused ? 'when the app is resumed' : html`<time datetime="${nextTick(w.schedule!, now).toISOString()}">${time(nextTick(w.schedule!, now).toISOString())}</time>`}</li>`)}</ul>`;
  const table =
    runs.length === 0
      ? html`<p class="help">No run yet.</p>`
      : html`<div class="scroll"><table>
  <caption class="visually-hidden">Latest scheduled runs</caption>
  <thead><tr><th scope="col">Function</th><th scope="col">Scheduled</th><th scope="col">Status</th><th scope="col">Duration</th><th scope="col">Error</th><th scope="col"><span class="visually-hidden">Logs</span></th></tr></thead>
  <tbody>${runs.slice(0, SHOWN_RUNS).map(
    (run) => html`<tr>
    <th scope="row">${run.function}</th><td><time datetime="${run.scheduledAt}">${time(run.scheduledAt)}</time></td>
    <td><span class="status ${TONES[run.status]}">${run.status}</span></td>
    <td>${run.durationMs === null ? '—' : `${(run.durationMs / 1000).toFixed(1)} s`}</td><td>${run.error?.message ?? ''}</td>
    <td>${run.status === 'skipped' ? '' : html`<a href="/dashboard/apps/${app}/runs/${run.id}">Logs<span class="visually-hidden"> of the run at ${time(run.scheduledAt)}</span></a>`}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
  return html`<section class="card" aria-labelledby="scheduled-runs">
  <h2 id="scheduled-runs">Scheduled runs</h2>
  ${schedules}
  ${table}
  <p class="help">The last 100 runs of each function are kept: <code>svc app runs ${app}</code> lists them.</p>
</section>`;
}

/** One run's page body: its status and what it printed. */
export function scheduledRunLogs(app: string, run: ScheduledRun): Html {
  return html`<p><a href="/dashboard/apps/${app}">← ${app}</a></p>
<p>${run.function}, scheduled <time datetime="${run.scheduledAt}">${time(run.scheduledAt)}</time>: <span class="status ${TONES[run.status]}">${run.status}</span>${run.error === null ? '' : html` (${run.error.message})`}</p>
<pre class="log" tabindex="0" aria-label="Log lines of the run">${run.logs.map((line) => `${line.time.slice(11, 19)} ${line.stream}: ${line.text}\n`)}</pre>`;
}

function time(iso: string): string {
  return `${iso.slice(0, 19).replace('T', ' ')} UTC`;
}
