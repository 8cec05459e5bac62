/**
 * Charts as inline SVG, drawn on the server: lines, areas or bars over a row
 * of columns (minutes, days), with a y axis, labelled ticks, a legend, and a
 * <title> and <desc> that say in words what the lines show. Colours come
 * from CSS classes (dashboard.css): the Content-Security-Policy allows no
 * inline style. Every text goes through `html`, so a name cannot become markup.
 */
import { html, type Html } from './html.js';

/** A series' colour, a class of dashboard.css (`tone-<name>`). */
export type Tone = 'green' | 'blue' | 'amber' | 'red' | 'purple' | 'grey';

export interface ChartSeries {
  readonly label: string;
  readonly tone: Tone;
  /** One per column; null: nothing known there (a gap). */
  readonly values: readonly (number | null)[];
}

export interface Chart {
  /** Unique on the page: the ids of its title and description. */
  readonly id: string;
  readonly title: string;
  /** What the values count, after each number in words: `requests/s`, `ms`. */
  readonly unit: string;
  readonly kind: 'line' | 'area' | 'bars';
  /** One label per column (`12 min ago`, `2025-03-01`). */
  readonly columns: readonly string[];
  /** The columns whose label the x axis shows. */
  readonly ticks: readonly number[];
  readonly series: readonly ChartSeries[];
  /** What an empty chart says (every value null): "No data" unless told. */
  readonly empty?: string;
}

/** About the width it is shown at, two to a row on a wide screen: its 13 px text stays about 13 px. */
const WIDTH = 480;
const HEIGHT = 230;
const LEFT = 48;
const RIGHT = 12;
/** Above the plot: the title and the unit, then the legend. */
const TOP = 56;
const BOTTOM = 26;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;
const Y_STEPS = 4;

export function svgChart(chart: Chart): Html {
  const known = chart.series.flatMap((s) => s.values.filter((v): v is number => v !== null && Number.isFinite(v)));
  const top = niceTop(Math.max(0, ...known));
  const body = known.length === 0 ? emptyPlot(chart.empty ?? 'No data') : plot(chart, top);
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${chart.id}-title ${chart.id}-desc" xmlns="http://www.w3.org/2000/svg">
<title id="${chart.id}-title">${chart.title}</title>
<desc id="${chart.id}-desc">${describe(chart, known.length === 0)}</desc>
<text class="heading" x="4" y="16">${chart.title}</text><text class="unit" x="${WIDTH - RIGHT}" y="16" text-anchor="end">${chart.unit}</text>
${legend(chart.series)}
${yAxis(known.length === 0 ? null : top)}
${xAxis(chart)}
${body}
</svg>`;
}

/** In words, for screen readers: each series' latest and highest value. */
function describe(chart: Chart, empty: boolean): string {
  if (empty) return `${chart.empty ?? 'No data'}.`;
  const parts = chart.series.map((series) => {
    const values = series.values.filter((v): v is number => v !== null && Number.isFinite(v));
    if (values.length === 0) return `${series.label}: no data`;
    return `${series.label}: latest ${number(values.at(-1)!)} ${chart.unit}, highest ${number(Math.max(...values))} ${chart.unit}`;
  });
  return `${chart.columns[0] ?? ''} to ${chart.columns.at(-1) ?? ''}. ${parts.join('; ')}.`;
}

function legend(series: readonly ChartSeries[]): Html {
  let x = 4;
  return html`<g class="legend">${series.map((s) => {
    const at = x;
    x += 28 + s.label.length * 7.5;
    return html`<rect class="swatch tone-${s.tone}" x="${at}" y="28" width="12" height="12" rx="2"/><text x="${at + 17}" y="38">${s.label}</text>`;
  })}</g>`;
}

/** Gridlines with their values; without data, only the base line. */
function yAxis(top: number | null): Html {
  const steps = top === null ? [0] : Array.from({ length: Y_STEPS + 1 }, (_, i) => i);
  return html`<g class="axis y">${steps.map((i) => {
    const y = yOf(i, Y_STEPS);
    return html`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y}" y2="${y}"/>${
      top === null ? '' : html`<text x="${LEFT - 6}" y="${y + 4}" text-anchor="end">${number((top * i) / Y_STEPS)}</text>`
    }`;
  })}</g>`;
}

function xAxis(chart: Chart): Html {
  const n = chart.columns.length;
  return html`<g class="axis x">${chart.ticks
    .filter((i) => i >= 0 && i < n)
    .map((i) => {
      const x = xOf(i, n);
      // Centred under its column, unless that would run it off the edge (about 7 px a character at 13 px).
      const half = (chart.columns[i]?.length ?? 0) * 3.6;
      const anchor = x + half > WIDTH ? 'end' : x - half < 0 ? 'start' : 'middle';
      return html`<line class="tick" x1="${x}" x2="${x}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H + 4}"/><text x="${x}" y="${HEIGHT - 6}" text-anchor="${anchor}">${chart.columns[i]}</text>`;
    })}</g>`;
}

function emptyPlot(text: string): Html {
  return html`<text class="empty" x="${LEFT + PLOT_W / 2}" y="${TOP + PLOT_H / 2}" text-anchor="middle">${text}</text>`;
}

function plot(chart: Chart, top: number): Html {
  const n = chart.columns.length;
  if (chart.kind === 'bars') return bars(chart.series, n, top);
  return html`${chart.series.map(
    (series) =>
      html`<g class="series tone-${series.tone}">${runsOf(series.values).map((run) => {
        const points = run.map(([i, v]) => [round(xOf(i, n)), round(TOP + PLOT_H - (v / top) * PLOT_H)] as const);
        // A lone value has no line to draw: a dot shows it.
        if (points.length === 1) return html`<circle cx="${points[0]![0]}" cy="${points[0]![1]}" r="3"/>`;
        const line = points.map(([x, y]) => `${x},${y}`).join('L');
        const area =
          chart.kind === 'area'
            ? html`<path class="area" d="M${points[0]![0]},${TOP + PLOT_H}L${line}L${points.at(-1)![0]},${TOP + PLOT_H}Z"/>`
            : '';
        return html`${area}<path class="line" d="M${line}"/>`;
      })}</g>`,
  )}`;
}

function bars(series: readonly ChartSeries[], n: number, top: number): Html {
  const group = (PLOT_W / Math.max(n, 1)) * 0.7;
  const width = group / Math.max(series.length, 1);
  return html`${series.map(
    (s, k) =>
      html`<g class="series tone-${s.tone}">${s.values.map((v, i) => {
        if (v === null || !Number.isFinite(v)) return '';
        const height = (v / top) * PLOT_H;
        const x = xOf(i, n) - group / 2 + k * width;
        return html`<rect class="bar" x="${round(x)}" y="${round(TOP + PLOT_H - height)}" width="${round(width * 0.9)}" height="${round(height)}"/>`;
      })}</g>`,
  )}`;
}

/** The unbroken stretches of a series (no null inside), as [column, value] pairs. */
function runsOf(values: readonly (number | null)[]): [number, number][][] {
  const runs: [number, number][][] = [];
  let run: [number, number][] = [];
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) {
      if (run.length > 0) runs.push(run);
      run = [];
    } else run.push([i, v]);
  });
  if (run.length > 0) runs.push(run);
  return runs;
}

/** The middle of column i of n. */
function xOf(i: number, n: number): number {
  return LEFT + ((i + 0.5) * PLOT_W) / Math.max(n, 1);
}

function yOf(step: number, steps: number): number {
  return TOP + PLOT_H - (step * PLOT_H) / steps;
}

/** The axis' top: 1, 2, 4, 6 or 8 times a power of ten (a quarter of it reads well too), at or above the highest value; 1 when all are 0. */
function niceTop(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 4, 6, 8]) if (max <= step * power * (1 + 1e-9)) return Number((step * power).toPrecision(12));
  return Number((10 * power).toPrecision(12));
}

/** A number as an axis or a sentence shows it: 3 significant digits at most, k and M for large ones. */
export function number(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e4) return `${trim(value / 1e3)}k`;
  return trim(value);
}

function trim(value: number): string {
  if (value === 0) return '0';
  return String(Number(value.toPrecision(3)));
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
