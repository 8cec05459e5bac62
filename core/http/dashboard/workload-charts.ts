/**
 * The five charts of a workload's last hour (core/infra/metrics/last-hour.ts),
 * one point a minute: requests per second by status class, p50 and p99
 * latency, containers running and starting, queue depth, cold starts.
 */
import type { HourReading } from '../../infra/metrics/last-hour.js';
import { html, type Html } from './html.js';
import { svgChart, type Chart } from './svg-chart.js';

const MINUTES = 60;
/** Columns labelled on the x axis: 45, 30 and 15 minutes ago, and now. */
const TICKS = [14, 29, 44, 59];
const COLUMNS = Array.from({ length: MINUTES }, (_, i) => (i === MINUTES - 1 ? 'now' : `${MINUTES - 1 - i} min ago`));
/** Nothing of the workload in this process yet: it counts from its own start. */
const UNKNOWN = 'No data yet: this server counts from its start';

export function workloadCharts(hour: HourReading | null): Html {
  const charts: Chart[] = [
    {
      ...frame('chart-requests', 'Requests per second by status', 'requests/s', 'line', hour),
      series: (['2xx', '3xx', '4xx', '5xx'] as const).map((status, k) => ({
        label: status,
        tone: (['green', 'blue', 'amber', 'red'] as const)[k]!,
        values: perSecond(hour, hour?.requests[status]),
      })),
    },
    {
      ...frame('chart-latency', 'Latency, p50 and p99', 'ms', 'line', hour, 'No requests in the last hour'),
      series: [
        { label: 'p50', tone: 'blue', values: milliseconds(hour?.p50) },
        { label: 'p99', tone: 'purple', values: milliseconds(hour?.p99) },
      ],
    },
    {
      ...frame('chart-containers', 'Containers', 'containers', 'line', hour),
      series: [
        { label: 'running', tone: 'green', values: hour?.running ?? [] },
        { label: 'starting', tone: 'amber', values: hour?.starting ?? [] },
      ],
    },
    {
      ...frame('chart-queue', 'Queue depth (most in the minute)', 'requests', 'area', hour),
      series: [{ label: 'queued', tone: 'grey', values: hour?.queued ?? [] }],
    },
    {
      ...frame('chart-cold-starts', 'Cold starts', 'per minute', 'bars', hour),
      series: [{ label: 'cold starts', tone: 'blue', values: hour?.coldStarts ?? [] }],
    },
  ];
  return html`<div class="charts">${charts.map((chart) => svgChart(chart))}</div>`;
}

function frame(
  id: string,
  title: string,
  unit: string,
  kind: Chart['kind'],
  hour: HourReading | null,
  empty = 'No data yet',
): Omit<Chart, 'series'> {
  return { id, title, unit, kind, columns: COLUMNS, ticks: TICKS, empty: hour === null ? UNKNOWN : empty };
}

/** Counts per minute as requests per second: the current minute divides by the seconds gone by. */
function perSecond(hour: HourReading | null, counts: readonly (number | null)[] | undefined): (number | null)[] {
  if (hour === null || counts === undefined) return [];
  return counts.map((count, i) => (count === null ? null : count / hour.seconds[i]!));
}

function milliseconds(seconds: readonly (number | null)[] | undefined): (number | null)[] {
  return (seconds ?? []).map((s) => (s === null ? null : s * 1000));
}
