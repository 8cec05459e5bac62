import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { svgChart, type Chart } from '../../../../core/http/dashboard/svg-chart.js';

const COLUMNS = Array.from({ length: 60 }, (_, i) => (i === 59 ? 'now' : `${59 - i} min ago`));

function chart(overrides: Partial<Chart>): Chart {
  return {
    id: 'c',
    title: 'Requests',
    unit: 'requests/s',
    kind: 'line',
    columns: COLUMNS,
    ticks: [14, 29, 44, 59],
    series: [{ label: '2xx', tone: 'green', values: COLUMNS.map((_, i) => (i < 30 ? null : i % 7)) }],
    ...overrides,
  };
}

/** Each document parsed by Python's XML parser, strict as any: the tag names of each, or the error. */
function parseAll(documents: readonly string[]): string[][] {
  const script = `
import json, sys, xml.etree.ElementTree as ET
out = []
for doc in json.load(sys.stdin):
    root = ET.fromstring(doc)
    out.append([el.tag.split('}')[-1] for el in root.iter()])
print(json.dumps(out))`;
  return JSON.parse(execFileSync(process.env.SVC_PYTHON ?? 'python3', ['-c', script], { input: JSON.stringify(documents) }).toString());
}

describe('svg charts', () => {
  it('draws lines, areas and bars as SVG that an XML parser reads, with a title, a description and a legend', () => {
    const drawn = (['line', 'area', 'bars'] as const).map((kind) => String(svgChart(chart({ kind }))));
    const tags = parseAll(drawn);
    assert.deepEqual(
      tags.map((names) => names.slice(0, 3)),
      [
        ['svg', 'title', 'desc'],
        ['svg', 'title', 'desc'],
        ['svg', 'title', 'desc'],
      ],
    );
    assert.ok(tags[0]!.includes('path'), 'a line');
    assert.ok(drawn[1]!.includes('class="area"'), 'an area under it');
    assert.equal((drawn[2]!.match(/class="bar"/g) ?? []).length, 30, 'a bar for each value, none in the gaps');
    for (const svg of drawn) {
      assert.match(svg, /role="img" aria-labelledby="c-title c-desc"/);
      assert.match(svg, /<desc id="c-desc">59 min ago to now\. 2xx: latest 3 requests\/s, highest 6 requests\/s\.<\/desc>/);
      assert.match(svg, /class="swatch tone-green"/);
      assert.doesNotMatch(svg, /style=/, 'no inline style: the CSP forbids it');
    }
  });

  it('escapes every text it is given', () => {
    const evil = '<script>alert(1)</script> & "quoted"';
    const svg = String(
      svgChart(
        chart({
          id: 'x"><script>',
          title: evil,
          unit: evil,
          columns: COLUMNS.map(() => evil),
          series: [{ label: evil, tone: 'red', values: COLUMNS.map(() => 1) }],
        }),
      ),
    );
    assert.doesNotMatch(svg, /<script/);
    assert.match(svg, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;quoted&quot;/);
    assert.equal(parseAll([svg])[0]![0], 'svg');
  });

  it('draws an empty series, or one with only gaps, as "No data" with no line', () => {
    const empty = [
      String(svgChart(chart({ series: [{ label: 'p50', tone: 'blue', values: [] }] }))),
      String(svgChart(chart({ series: [{ label: 'p50', tone: 'blue', values: COLUMNS.map(() => null) }], empty: 'No requests yet' }))),
      String(svgChart(chart({ series: [] }))),
    ];
    parseAll(empty);
    assert.match(empty[0]!, /<text class="empty"[^>]*>No data<\/text>/);
    assert.match(empty[1]!, /<text class="empty"[^>]*>No requests yet<\/text>/);
    assert.match(empty[1]!, /<desc id="c-desc">No requests yet\.<\/desc>/);
    for (const svg of empty) assert.doesNotMatch(svg, /<path|<circle|class="bar"/);
  });

  it('breaks the line at a gap and shows a lone value as a dot', () => {
    const values = COLUMNS.map((_, i) => (i === 10 || (i >= 20 && i < 25) || (i >= 40 && i < 50) ? 2 : null));
    const svg = String(svgChart(chart({ series: [{ label: '2xx', tone: 'green', values }] })));
    assert.equal((svg.match(/class="line"/g) ?? []).length, 2);
    assert.equal((svg.match(/<circle/g) ?? []).length, 1);
    assert.deepEqual(
      [...svg.matchAll(/<text x="42" y="[\d.]+" text-anchor="end">([^<]+)<\/text>/g)].map((m) => m[1]),
      ['0', '0.5', '1', '1.5', '2'],
      'the y axis: up to 2, in 4 steps',
    );
  });
});
