/**
 * What the Calls page shows (pages/calls.ts): the app's maps with their inputs by where they
 * are, its spawned calls (the columns of `svc app calls`) with a status filter, and one call's
 * outcome, attempts, logs and callback. Pure: views in, HTML out; every string from a user
 * (function names, error messages, log lines) goes through `html`, which escapes it.
 */
import { CALL_STATUSES, type CallLogs, type CallStatus, type CallView } from '../../services/calls/types.js';
import type { MapCounts, MapView } from '../../services/maps/types.js';
import { html, type Html } from './html.js';

type Tone = 'ok' | 'busy' | 'down' | 'bad';

const CALL_TONES: Readonly<Record<CallStatus, Tone>> = {
  queued: 'busy',
  running: 'busy',
  succeeded: 'ok',
  failed: 'bad',
  cancelled: 'down',
  expired: 'down',
};

/** The counts a map's row shows, in its order, with their column names. */
export const MAP_COLUMNS: readonly { readonly count: keyof MapCounts; readonly label: string }[] = [
  { count: 'succeeded', label: 'Done' },
  { count: 'failed', label: 'Failed' },
  { count: 'running', label: 'Running' },
  { count: 'queued', label: 'Queued' },
  { count: 'cancelled', label: 'Cancelled' },
];

/** A map as the page's script reads it while it follows the maps: what its row shows. */
export interface MapRow {
  readonly id: string;
  readonly state: string;
  readonly tone: Tone;
  readonly inputs: MapCounts;
  /** No input of it runs or waits any more: the page stops asking once every map has ended. */
  readonly ended: boolean;
}

/** A map's state in words: `running`; `cancelled, finishing` while inputs started before the cancel still run; `ended`, `cancelled`. */
export function mapRow(map: MapView): MapRow {
  const ended = map.endedAt !== null;
  if (map.status === 'running') return { id: map.id, state: 'running', tone: 'busy', inputs: map.inputs, ended };
  if (map.status === 'cancelled')
    return { id: map.id, state: ended ? 'cancelled' : 'cancelled, finishing', tone: 'down', inputs: map.inputs, ended };
  return { id: map.id, state: 'ended', tone: map.inputs.failed > 0 ? 'bad' : 'ok', inputs: map.inputs, ended };
}

/** The "Maps" card; `live` is the JSON address the script polls while a map has not ended. */
export function mapsCard(maps: readonly MapView[], live: string): Html {
  const rows = maps.map(mapRow);
  const following = rows.some((row) => !row.ended);
  const body =
    rows.length === 0
      ? html`<p class="help">No map of this app is running or ended in the last 10 minutes. <code>f.map(…)</code> in Python starts one.</p>`
      : html`<div class="scroll"><table>
  <caption class="visually-hidden">Maps and their inputs</caption>
  <thead><tr><th scope="col">Map</th><th scope="col">Function</th><th scope="col">Status</th><th scope="col">Progress</th>${MAP_COLUMNS.map((c) => html`<th scope="col">${c.label}</th>`)}<th scope="col">Started</th></tr></thead>
  <tbody>${maps.map((map, i) => mapTableRow(map, rows[i]!))}</tbody>
</table></div>`;
  return html`<section class="card" aria-labelledby="maps" id="maps-card"${following ? html` data-live="${live}"` : ''}>
  <h2 id="maps">Maps</h2>
  ${body}
  <p class="help" id="maps-state" role="status">${following ? 'Following: the counts change as the inputs run (reload without JavaScript).' : ''}</p>
</section>`;
}

function mapTableRow(map: MapView, row: MapRow): Html {
  return html`<tr data-map="${map.id}">
    <th scope="row"><code>${map.id}</code></th><td>${map.function}</td>
    <td><span class="status ${row.tone}" data-state>${row.state}</span>${waitingNote(map.waiting)}</td>
    <td>${progress(map.inputs)}</td>
    ${MAP_COLUMNS.map((c) => html`<td data-count="${c.count}">${map.inputs[c.count]}</td>`)}
    <td><time datetime="${map.createdAt}">${time(map.createdAt)}</time></td>
  </tr>`;
}

/** Inputs answered or cancelled of those received (more may still come while the map runs). */
function progress(inputs: MapCounts): Html {
  const settled = inputs.succeeded + inputs.failed + inputs.cancelled;
  return html`<progress max="${Math.max(inputs.received, 1)}" value="${settled}" aria-label="${settled} of ${inputs.received} inputs settled">${settled} of ${inputs.received}</progress> <span data-count="received">${inputs.received}</span> received`;
}

/** The "Calls" card: the filter (the statuses of `svc app calls --status`), then the newest `bound` calls. */
export function callsCard(app: string, calls: readonly CallView[], status: CallStatus | undefined, bound: number, now: number): Html {
  const filter = html`<form method="get" action="/dashboard/apps/${app}/calls" class="actions">
  <label for="call-status">Status</label>
  <select id="call-status" name="status"><option value="">all</option>${CALL_STATUSES.map((s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`)}</select>
  <button type="submit" class="secondary">Show</button>
</form>`;
  const table =
    calls.length === 0
      ? html`<p>No ${status === undefined ? '' : `${status} `}call of ${app} is kept.</p>`
      : html`<div class="scroll"><table>
  <caption class="visually-hidden">Calls, newest first</caption>
  <thead><tr><th scope="col">Call</th><th scope="col">Function</th><th scope="col">Status</th><th scope="col">Age</th><th scope="col">Duration</th><th scope="col">Attempt</th><th scope="col">Error</th></tr></thead>
  <tbody>${calls.map(
    (call) => html`<tr data-call="${call.id}">
    <th scope="row"><a href="/dashboard/apps/${app}/calls/${call.id}"><code>${call.id}</code></a></th><td>${call.function}</td>
    <td><span class="status ${CALL_TONES[call.status]}">${call.status}</span>${waitingNote(call.waiting)}</td>
    <td><time datetime="${call.createdAt}" title="${time(call.createdAt)}">${age(call.createdAt, now)}</time></td>
    <td>${duration(call.durationMs)}</td><td>${call.attempt}/${call.maxAttempts}</td><td>${callError(call)}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
  return html`<section class="card" aria-labelledby="calls">
  <h2 id="calls">Calls</h2>
  ${filter}
  ${table}
  <p class="help">The newest ${bound} calls${status === undefined ? '' : ` of status ${status}`}, spawned with <code>f.spawn()</code> or <code>POST /api/v1/apps/${app}/functions/&lt;function&gt;/calls</code>; <code>svc app calls ${app} --limit 1000</code> lists up to 1000.</p>
</section>`;
}

/** One call's page body: its outcome and times, its callback's attempts, and what it printed (`logs` null once expired). */
export function callDetail(app: string, call: CallView, logs: CallLogs | null): Html {
  const facts = html`<dl class="facts">
  <dt>Status</dt><dd><span class="status ${CALL_TONES[call.status]}" id="call-status">${call.status}</span></dd>
  <dt>Function</dt><dd>${call.function}</dd>
  <dt>Attempt</dt><dd>${call.attempt} of at most ${call.maxAttempts}</dd>
  <dt>Created</dt><dd>${when(call.createdAt)}</dd>
  <dt>Started</dt><dd>${when(call.startedAt)}</dd>
  <dt>Ended</dt><dd>${when(call.endedAt)}</dd>
  <dt>Duration</dt><dd>${duration(call.durationMs)}</dd>
  ${call.waiting === undefined ? '' : html`<dt>Waiting</dt><dd id="call-waiting">${call.waiting}</dd>`}
  ${call.error === null ? '' : html`<dt>Error</dt><dd><pre class="code-block" id="call-error">${call.error.code === null ? call.error.message : `${call.error.code}: ${call.error.message}`}</pre></dd>`}
  ${call.result === undefined ? '' : html`<dt>Result</dt><dd><pre class="code-block">${JSON.stringify(call.result, null, 2)}</pre></dd>`}
</dl>`;
  const callback =
    call.callback === null
      ? ''
      : html`<section class="card" aria-labelledby="callback">
  <h2 id="callback">Completion callback</h2>
  <p><code>${call.callback.url}</code>: ${call.callback.delivered ? 'delivered' : 'not delivered (yet)'}</p>
  ${call.callback.attempts.length === 0 ? html`<p class="help">No attempt yet.</p>` : html`<ul>${call.callback.attempts.map((a) => html`<li>${time(a.at)}: ${a.status === undefined ? (a.error ?? 'no answer') : `HTTP ${a.status}`}</li>`)}</ul>`}
</section>`;
  const printed =
    logs === null
      ? html`<p class="help">Its logs went with its outcome: it ended longer ago than svc keeps them.</p>`
      : html`${logs.dropped > 0 ? html`<p class="help">${logs.dropped} earlier lines are left out.</p>` : ''}<pre class="log" tabindex="0" aria-label="What the call printed">${logs.lines.length === 0 ? 'Nothing printed.' : logs.lines.map((l) => `#${l.attempt} ${l.stream}: ${l.line}\n`)}</pre>`;
  return html`<p><a href="/dashboard/apps/${app}/calls">← Calls of ${app}</a></p>
<section class="card" aria-labelledby="outcome"><h2 id="outcome">Outcome</h2>${facts}</section>
${callback}
<section class="card" aria-labelledby="printed"><h2 id="printed">Logs</h2>${printed}</section>`;
}

/** Why a call or map waits (for a GPU), under its status; nothing when it does not. */
function waitingNote(waiting: string | undefined): Html | string {
  return waiting === undefined ? '' : html`<br><small class="help" data-waiting>${waiting}</small>`;
}

/** The call's error on one line, svc's code first when it has one (as `svc app calls` shows it). */
export function callError(call: Pick<CallView, 'error'>): string {
  if (call.error === null) return '';
  const message = call.error.message.split('\n')[0] ?? '';
  return call.error.code === null ? message : `${call.error.code}: ${message}`;
}

/** How long ago `iso` was, in its largest unit: `42s`, `5m`, `3h`, `2d`. */
export function age(iso: string, now: number): string {
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

function duration(ms: number | null): string {
  return ms === null ? '—' : `${(ms / 1000).toFixed(1)} s`;
}

function when(iso: string | null): Html | string {
  return iso === null ? '—' : html`<time datetime="${iso}">${time(iso)}</time>`;
}

function time(iso: string): string {
  return `${iso.slice(0, 19).replace('T', ' ')} UTC`;
}
