/**
 * The bench's chart: two bar panels (req/s at c=64 per path; proxy CPU per
 * request at c=64 per proxy), drawn as SVG here and rendered to PNG by
 * Chromium through playwright-core (the dashboard tests' browser), so that
 * docs/benchmarks.md can embed it without a charting dependency.
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export interface Bar {
  readonly label: string;
  readonly value: number;
  /** svc's own bars stand out. */
  readonly ours: boolean;
}

export interface Panel {
  readonly title: string;
  readonly unit: string;
  readonly bars: readonly Bar[];
}

const WIDTH = 960;
const BAR = 26;
const GAP = 8;
const LABEL = 230;
const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function panel(spec: Panel, top: number): { svg: string; height: number } {
  const max = Math.max(1, ...spec.bars.map((bar) => bar.value));
  const span = WIDTH - LABEL - 110;
  const rows = spec.bars.map((bar, index) => {
    const y = top + 34 + index * (BAR + GAP);
    const width = Math.max(1, (bar.value / max) * span);
    const value = bar.value >= 100 ? Math.round(bar.value).toLocaleString('en-US') : bar.value.toFixed(1);
    return (
      `<text x="${LABEL - 10}" y="${y + BAR * 0.68}" text-anchor="end" class="label">${escapeXml(bar.label)}</text>` +
      `<rect x="${LABEL}" y="${y}" width="${width.toFixed(1)}" height="${BAR}" rx="3" fill="${bar.ours ? '#d9480f' : '#4263eb'}"/>` +
      `<text x="${(LABEL + width + 8).toFixed(1)}" y="${y + BAR * 0.68}" class="value">${value} ${escapeXml(spec.unit)}</text>`
    );
  });
  const height = 34 + spec.bars.length * (BAR + GAP) + 16;
  return { svg: `<text x="20" y="${top + 20}" class="panel">${escapeXml(spec.title)}</text>${rows.join('')}`, height };
}

/** `notes` are lines of text under the panels (the goals, judged). */
export function chartSvg(title: string, subtitle: string, panels: readonly Panel[], notes: readonly string[] = []): string {
  let top = 70;
  const parts: string[] = [];
  for (const spec of panels) {
    const drawn = panel(spec, top);
    parts.push(drawn.svg);
    top += drawn.height;
  }
  for (const note of notes) {
    top += 20;
    parts.push(`<text x="20" y="${top}" class="label">${escapeXml(note)}</text>`);
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${top + 10}" viewBox="0 0 ${WIDTH} ${top + 10}">
<style>text{font-family:'DejaVu Sans',Arial,sans-serif;fill:#212529}.title{font-size:19px;font-weight:bold}.sub{font-size:13px;fill:#495057}.panel{font-size:15px;font-weight:bold}.label{font-size:13px}.value{font-size:12px;fill:#495057}</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="20" y="30" class="title">${escapeXml(title)}</text>
<text x="20" y="52" class="sub">${escapeXml(subtitle)}</text>
${parts.join('\n')}
</svg>`;
}

/** Renders the SVG to a PNG file with Chromium (`CHROMIUM_BIN`, default Debian's); false when there is none. */
export async function renderPng(svg: string, file: string): Promise<boolean> {
  const executablePath = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) return false;
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ deviceScaleFactor: 1 });
    await page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
    await page.locator('svg').screenshot({ path: file });
    return true;
  } finally {
    await browser.close();
  }
}
