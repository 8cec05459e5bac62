/**
 * The last log lines of each deployment unit, in memory: what the control
 * plane shows for a crash-looping workload (whose error responses must not
 * carry logs: its URL may be public). Fed by the driver's LogSink.
 */
import type { LogLine, LogSink } from '../scheduler/types.js';
import { RingBuffer } from './ring-buffer.js';

export const DEFAULT_LINES_PER_UNIT = 200;

export class RecentLogs {
  readonly #units = new Map<string, RingBuffer<LogLine>>();
  readonly #linesPerUnit: number;

  constructor(linesPerUnit = DEFAULT_LINES_PER_UNIT) {
    this.#linesPerUnit = linesPerUnit;
  }

  /** A LogSink that records each line here, then passes it on to `next`. */
  sink(next: LogSink = () => {}): LogSink {
    return (line) => {
      this.add(line);
      next(line);
    };
  }

  add(line: LogLine): void {
    let ring = this.#units.get(line.unit);
    if (!ring) this.#units.set(line.unit, (ring = new RingBuffer(this.#linesPerUnit)));
    ring.push(line);
  }

  /** The unit's last `count` lines (all that are kept by default), oldest first. */
  lines(unit: string, count?: number): LogLine[] {
    return this.#units.get(unit)?.last(count) ?? [];
  }

  /** Drops a removed unit's lines. */
  forget(unit: string): void {
    this.#units.delete(unit);
  }
}
