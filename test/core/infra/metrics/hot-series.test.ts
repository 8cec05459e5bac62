import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from '../../../../core/infra/metrics/hot-series.js';

const BOUNDS = [0.001, 0.01, 0.1, 1];
const OBSERVED = [0.0004, 0.001, 0.002, 0.05, 0.05, 0.7, 3, 12];

/** The registry's text for one metric, the HELP and TYPE lines included. */
async function text(registry: Registry): Promise<string> {
  return (await registry.metrics()).trim();
}

describe('hot series', () => {
  it("scrape exactly as prom-client's counter and histogram do for the same updates", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const counter = new HotCounter('x_total', 'Things.', ours);
    const reference = new Counter({ name: 'x_total', help: 'Things.', labelNames: ['app', 'status'], registers: [theirs] });
    for (const [labels, times] of [
      [{ app: 'a', status: '200' }, 3],
      [{ app: 'b', status: '429' }, 2],
    ] as const) {
      for (let i = 0; i < times; i++) {
        counter.child(labels).inc();
        reference.inc(labels);
      }
    }
    assert.equal(await text(ours), await text(theirs));

    const histograms = new Registry();
    const referenceHistograms = new Registry();
    const histogram = new HotHistogram('d_seconds', 'Durations.', BOUNDS, histograms);
    const referenceHistogram = new Histogram({
      name: 'd_seconds',
      help: 'Durations.',
      labelNames: ['app'],
      buckets: BOUNDS,
      registers: [referenceHistograms],
    });
    const child = histogram.child({ app: 'a' });
    for (const value of OBSERVED) {
      child.observe(value);
      referenceHistogram.observe({ app: 'a' }, value);
    }
    assert.equal(await text(histograms), await text(referenceHistograms));
  });

  it('give one label set one child, however often it is asked for (two units of a workload share its series)', () => {
    const counter = new HotCounter('y_total', 'Things.', new Registry());
    const first = counter.child({ app: 'a', status: '200' });
    first.inc();
    const again = counter.child({ app: 'a', status: '200' });
    again.inc();
    assert.equal(first, again);
    assert.equal(first.value, 2);
    assert.notEqual(counter.child({ app: 'a', status: '500' }), first);
  });
});
