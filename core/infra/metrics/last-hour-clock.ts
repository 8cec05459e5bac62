/**
 * What moves the last hour (last-hour.ts) along, once a second: its clock
 * (the request path reads the current bucket from it, never a Date), then a
 * sample of the containers and queue of each served unit, read as the
 * scrape-time gauges read them (in memory: the routes, admission, the driver).
 */
import { hourKey, type LastHour } from './last-hour.js';
import type { UnitReading } from './platform-metrics.js';

/** Also how often containers and the queue are sampled: a queue that lasts a second or more shows. */
const TICK_MS = 1_000;

export function startLastHourClock(hour: LastHour, units: () => Iterable<UnitReading>): { stop(): void } {
  const tick = (): void => {
    hour.advance(Date.now());
    hour.sample(samplesOf(units()));
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
