/**
 * What moves the last hour (last-hour.ts) along: once a second its clock (the
 * request path reads the current bucket from it, never a Date), and every
 * SAMPLE_EVERY_S seconds the containers and queue of each served unit, read
 * as the scrape-time gauges read them.
 */
import { hourKey, type LastHour } from './last-hour.js';
import type { UnitReading } from './platform-metrics.js';

const TICK_MS = 1_000;
/** Containers change over seconds; a queue's depth is the most of the minute's 12 samples. */
export const SAMPLE_EVERY_S = 5;

export function startLastHourClock(hour: LastHour, units: () => Iterable<UnitReading>): { stop(): void } {
  let ticks = 0;
  const tick = (): void => {
    hour.advance(Date.now());
    if (ticks++ % SAMPLE_EVERY_S === 0) hour.sample(samplesOf(units()));
  };
  tick();
  const timer = setInterval(tick, TICK_MS);
  // Nothing to finish: a process that ends loses the hour (it lives in memory only).
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

function* samplesOf(units: Iterable<UnitReading>) {
  for (const unit of units) {
    yield {
      key: hourKey(unit.ref, unit.workload),
      running: unit.containers.healthy ?? 0,
      starting: unit.containers.starting ?? 0,
      queued: unit.queued,
    };
  }
}
