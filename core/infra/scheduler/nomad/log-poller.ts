/**
 * Pushes the output of a unit's Nomad allocations into the LogSink, line by
 * line, as the local driver pushes its containers' output. It polls
 * `GET /v1/client/fs/logs/:alloc?task=&type=stdout|stderr&origin=start&offset=&plain=true`
 * for every allocation of the unit whose task has started. Polling is used because
 * `follow` would keep one connection open per stream. Each read asks for the bytes
 * after those already read, at most `readBytes` of them. A read that gets `readBytes`
 * is followed at once by the next, so a backlog is caught up; the driver's `Limiter`
 * bounds the reads in flight. The last line is held back until its newline arrives,
 * or until the allocation has ended and been read one last time.
 *
 * **Offsets and rotation.** Nomad counts an `origin=start` offset across the task's log
 * files still on disk, `<task>.<type>.0`, `.1`, … in index order (hashicorp/nomad
 * `client/fs_endpoint.go` `logsImpl`, `findClosest`). So a byte count follows a
 * rotation without a gap. The limit: once a stream has more than `LogConfig.MaxFiles`
 * files (svc's jobs keep 5 × 10 MB), Nomad deletes the oldest one
 * (`client/logmon/logging/rotator.go` `purgeOldFiles`). Every offset then moves by that
 * file's size, and a plain answer does not say so. To notice this, each read starts
 * `OVERLAP` bytes early and checks that it repeats the last bytes read. When it does
 * not, the stream finds its new end and searches for those bytes in the window just
 * before it. If they are found, reading resumes right after them. If not (more than
 * `readBytes` was written since the last read), reading resumes at the window's first
 * line: the lines before it are lost, and a `system` line says so. A task that repeats
 * the same output may lose or repeat a few lines at that point.
 *
 * **After svc restarts** (`resume`), allocations already running when the unit's first
 * allocation list arrives are read from the end of their logs (origin=end, offset=0):
 * their earlier lines were already delivered, or are in Nomad (`nomad alloc logs`). This
 * poller does not replay them. Reading starts at the beginning of the last unfinished
 * line, so that line arrives whole.
 */
import { SvcError } from '../../../model/errors.js';
import type { LogLine, LogSink } from '../types.js';
import { nomadError } from './client.js';
import type { AllocationStub } from './types.js';
import { isTerminal, type AllocationWatcher } from './watcher.js';

type Stream = 'stdout' | 'stderr';

/** How to reach Nomad's logs endpoint (the driver's client settings). */
export interface LogApi {
  readonly url: string;
  readonly token: string | undefined;
  readonly namespace: string | undefined;
  readonly region: string | undefined;
  readonly requestTimeoutMs: number;
}

export interface LogPollerOptions {
  readonly api: LogApi;
  readonly key: string;
  /** The task whose output is read (the job's first task). */
  readonly task: () => string;
  readonly watcher: AllocationWatcher;
  readonly sink: LogSink;
  readonly pollMs: number;
  /** At most this many new bytes per read of one stream. */
  readonly readBytes: number;
  /** Shared by the driver's pollers: bounds the reads in flight. */
  readonly limiter: Limiter;
  /** svc restarted: allocations running at the first allocation list start at the end of their logs. */
  readonly resume: boolean;
}

/** Bytes read again before each read, to notice that Nomad's offsets moved. */
const OVERLAP = 128;
/** A longer line without a newline is delivered in pieces of this size. */
const MAX_LINE = 64 * 1024;
const MAX_BACKOFF_MS = 10_000;
/** Bounds the probes that find the end of a stream (about 2 × log2(size / readBytes) are needed). */
const MAX_PROBES = 64;
const EMPTY = Buffer.alloc(0);

/** Runs at most `max` tasks at once; the others wait their turn. */
export class Limiter {
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  /** Runs `task` once a slot is free. If `signal` aborts first, it does not run the task and returns undefined. */
  async run<T>(signal: AbortSignal, task: () => Promise<T>): Promise<T | undefined> {
    while (this.#active >= this.max && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake);
          const at = this.#waiting.indexOf(wake);
          if (at >= 0) this.#waiting.splice(at, 1);
          resolve();
        };
        this.#waiting.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
    if (signal.aborted) return undefined;
    this.#active += 1;
    try {
      return await task();
    } finally {
      this.#active -= 1;
      this.#waiting.shift()?.();
    }
  }
}

/** One stream of one allocation: what has been read, and the unfinished last line. */
class StreamState {
  /** Bytes read so far, in the endpoint's current offsets. Undefined until the end is found (resumed allocations). */
  offset: number | undefined;
  /** The last bytes read (at most OVERLAP); the next read must repeat them. */
  tail: Buffer = EMPTY;
  #partial: Buffer = EMPTY;

  constructor(
    readonly type: Stream,
    fromEnd: boolean,
  ) {
    this.offset = fromEnd ? undefined : 0;
  }

  /** Takes the bytes that follow `offset` and returns the lines they complete. */
  take(bytes: Buffer): Buffer[] {
    if (bytes.length === 0) return [];
    this.offset = (this.offset ?? 0) + bytes.length;
    this.tail = Buffer.from(lastBytes(bytes.length >= OVERLAP ? bytes : Buffer.concat([this.tail, bytes]), OVERLAP));
    const buffer = this.#partial.length > 0 ? Buffer.concat([this.#partial, bytes]) : bytes;
    const lines: Buffer[] = [];
    let start = 0;
    for (let nl = buffer.indexOf(10); nl >= 0; nl = buffer.indexOf(10, start)) {
      lines.push(buffer.subarray(start, nl));
      start = nl + 1;
    }
    let rest = buffer.subarray(start);
    while (rest.length > MAX_LINE) {
      const cut = utf8Boundary(rest, MAX_LINE);
      lines.push(rest.subarray(0, cut));
      rest = rest.subarray(cut);
    }
    this.#partial = Buffer.from(rest);
    return lines;
  }

  /** The unfinished last line, when nothing will complete it (the allocation ended, or bytes were lost). */
  flush(): Buffer | undefined {
    const partial = this.#partial;
    this.#partial = EMPTY;
    return partial.length > 0 ? partial : undefined;
  }

  /** Continues at `offset`; `before` holds the bytes just before it (they become the tail). */
  continueAt(offset: number, before: Buffer): void {
    this.offset = offset;
    this.tail = Buffer.from(lastBytes(before, OVERLAP));
  }

  /**
   * Continues from the start of the last unfinished line in `before`, the bytes that end at
   * offset `end`, so that this line arrives whole. If `before` has no newline, it continues from `end`.
   */
  resumeAt(end: number, before: Buffer): void {
    const nl = before.lastIndexOf(10);
    const kept = nl >= 0 ? before.subarray(0, nl + 1) : before;
    this.continueAt(end - (before.length - kept.length), kept);
  }
}

/** One allocation being read. */
class AllocLog {
  readonly streams: readonly StreamState[];
  /** Terminal, or gone from the list: read until nothing is left, then stop. */
  ended = false;
  done = false;
  busy = false;
  /** When the next read may start (Date.now() ms). */
  nextAt = 0;
  delayMs: number;
  /** Resumed after a restart of svc: say once where its lines start. */
  announce: boolean;

  constructor(
    readonly id: string,
    fromEnd: boolean,
    pollMs: number,
  ) {
    this.streams = [new StreamState('stdout', fromEnd), new StreamState('stderr', fromEnd)];
    this.delayMs = pollMs;
    this.announce = fromEnd;
  }
}

/** Reads the logs of one unit's allocations into the sink until `stop()`. */
export class LogPoller {
  readonly #allocs = new Map<string, AllocLog>();
  readonly #abort = new AbortController();
  readonly #running = new Set<Promise<void>>();
  readonly #timer: NodeJS.Timeout;
  #kicked: NodeJS.Timeout | undefined;
  /** True until the watcher's first allocation list has been seen. */
  #first = true;
  /** A read failed and was reported; the next read that works clears it. */
  #failing = false;
  readonly #onChange = () => this.#sync();

  constructor(private readonly options: LogPollerOptions) {
    options.watcher.changes.on('change', this.#onChange);
    this.#timer = setInterval(() => this.#tick(), options.pollMs);
    this.#timer.unref();
    this.#sync();
  }

  /** Stops polling, aborts reads in flight and waits for them. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    clearTimeout(this.#kicked);
    this.options.watcher.changes.off('change', this.#onChange);
    this.#abort.abort();
    await Promise.all(this.#running);
  }

  /** Follows the watcher: starts reading started allocations, and marks ended ones for a last read. */
  #sync(): void {
    const { watcher, resume } = this.options;
    if (!watcher.loaded || this.#abort.signal.aborted) return;
    const first = this.#first;
    this.#first = false;
    let wake = false;
    for (const { stub } of watcher.allocs.values()) {
      let log = this.#allocs.get(stub.ID);
      if (!log) {
        if (!started(stub, this.options.task())) continue;
        const old = first && resume;
        log = new AllocLog(stub.ID, old, this.options.pollMs);
        // It ended before svc started again: its lines are old.
        if (old && isTerminal(stub)) log.done = true;
        this.#allocs.set(stub.ID, log);
        wake = true;
      }
      if (isTerminal(stub) && !log.ended) {
        log.ended = true;
        log.nextAt = 0;
        wake = true;
      }
    }
    for (const [id, log] of this.#allocs) {
      if (watcher.allocs.has(id)) continue;
      if (log.done) this.#allocs.delete(id);
      else if (!log.ended) {
        // Gone from Nomad's list (garbage-collected): one last try.
        log.ended = true;
        wake = true;
      }
    }
    if (wake) this.#kick();
  }

  /** Reads at once instead of at the next tick (a new or ended allocation, or more bytes waiting). */
  #kick(): void {
    if (this.#kicked || this.#abort.signal.aborted) return;
    this.#kicked = setTimeout(() => {
      this.#kicked = undefined;
      this.#tick();
    }, 0);
    this.#kicked.unref();
  }

  #tick(): void {
    const now = Date.now();
    for (const log of this.#allocs.values()) {
      if (log.done || log.busy || log.nextAt > now) continue;
      log.busy = true;
      const run: Promise<void> = this.#poll(log).finally(() => {
        log.busy = false;
        this.#running.delete(run);
      });
      this.#running.add(run);
    }
  }

  async #poll(log: AllocLog): Promise<void> {
    const signal = this.#abort.signal;
    // Only a read that began after the allocation ended has seen its last lines.
    const endedBefore = log.ended;
    try {
      const more = await this.options.limiter.run(signal, async () => {
        let full = false;
        for (const stream of log.streams) if (!signal.aborted && (await this.#read(log, stream))) full = true;
        return full;
      });
      if (more === undefined || signal.aborted) return;
      this.#failing = false;
      log.delayMs = this.options.pollMs;
      log.nextAt = Date.now() + this.options.pollMs;
      if (log.announce) {
        log.announce = false;
        this.#emit(
          log.id,
          'system',
          `svc started again: the lines allocation ${log.id} printed before now are not read again (see \`nomad alloc logs ${log.id}\`)`,
        );
      }
      if (more || (log.ended && !endedBefore)) {
        log.nextAt = 0;
        this.#kick();
      } else if (log.ended) this.#finish(log);
    } catch (error) {
      if (!signal.aborted) this.#failed(log, error);
    }
  }

  /** Reads one stream once; true when it read `readBytes` new bytes (more may be waiting). */
  async #read(log: AllocLog, stream: StreamState): Promise<boolean> {
    if (stream.offset === undefined) {
      const { end, before } = await this.#findEnd(log.id, stream.type);
      stream.resumeAt(end, before);
      return false;
    }
    const { readBytes } = this.options;
    const overlap = stream.tail.length;
    const data = await this.#fetch(log.id, stream.type, stream.offset - overlap, readBytes + overlap);
    if (!data.subarray(0, overlap).equals(stream.tail)) {
      await this.#recover(log, stream);
      return true;
    }
    for (const line of stream.take(data.subarray(overlap))) this.#emit(log.id, stream.type, line);
    return data.length >= readBytes + overlap;
  }

  /**
   * Nomad's offsets moved (it deleted the stream's oldest rotated file): finds the bytes last
   * read near the new end and continues after them, or says that lines were lost.
   */
  async #recover(log: AllocLog, stream: StreamState): Promise<void> {
    const size = this.options.readBytes + OVERLAP;
    const { end } = await this.#findEnd(log.id, stream.type);
    const from = Math.max(0, end - size);
    const window = await this.#fetch(log.id, stream.type, from, size);
    const at = window.lastIndexOf(stream.tail);
    if (at >= 0) {
      stream.continueAt(from + at + stream.tail.length, window.subarray(0, at + stream.tail.length));
      return;
    }
    // The bytes last read are not in the window, so every byte in it is new: more than a window
    // was written since the last read, or Nomad deleted the file being read. What came before is lost.
    const partial = stream.flush();
    if (partial) this.#emit(log.id, stream.type, partial);
    this.#emit(
      log.id,
      'system',
      `some ${stream.type} lines of allocation ${log.id} are missing: Nomad deleted its oldest rotated log file (the task's LogConfig.MaxFiles) before svc read them`,
    );
    const start = from === 0 ? 0 : window.indexOf(10) + 1;
    stream.continueAt(from + start, window.subarray(0, start));
  }

  /**
   * The stream's size now (origin=end, offset=0 as an origin=start offset), and the bytes just
   * before it. A plain answer has no size, so it probes: a read at an offset past the end is
   * empty, and a read shorter than `readBytes` reaches the end. It doubles the offset until it
   * passes the end, then halves the gap.
   */
  async #findEnd(allocId: string, type: Stream): Promise<{ end: number; before: Buffer }> {
    const size = this.options.readBytes;
    let low = 0; // the stream has at least `low` bytes…
    let high = Infinity; // …and at most `high`
    let at = 0;
    for (let probe = 0; probe < MAX_PROBES; probe += 1) {
      const data = await this.#fetch(allocId, type, at, size);
      if (data.length > 0 && data.length < size) return { end: at + data.length, before: data };
      if (data.length === 0) {
        if (at <= low) return { end: at, before: EMPTY };
        high = at;
      } else low = Math.max(low, at + size);
      at = high === Infinity ? low * 2 : high - low <= size ? low : Math.floor((low + high) / 2);
    }
    // The task writes faster than the probes close in: start at what is known to exist.
    return { end: low, before: EMPTY };
  }

  /** `GET /v1/client/fs/logs/:alloc` from `offset`, at most `limit` bytes (the rest of the answer is not read). */
  async #fetch(allocId: string, type: Stream, offset: number, limit: number): Promise<Buffer> {
    const { api } = this.options;
    const path = `/v1/client/fs/logs/${encodeURIComponent(allocId)}`;
    const query = new URLSearchParams({ task: this.options.task(), type, origin: 'start', offset: String(offset), plain: 'true' });
    if (api.namespace !== undefined) query.set('namespace', api.namespace);
    if (api.region !== undefined) query.set('region', api.region);
    const timeout = AbortSignal.timeout(api.requestTimeoutMs);
    const signal = AbortSignal.any([this.#abort.signal, timeout]);
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      const response = await fetch(`${api.url}${path}?${query}`, { headers: api.token ? { 'X-Nomad-Token': api.token } : {}, signal });
      if (!response.ok) throw nomadError(response.status, 'GET', path, await response.text());
      const reader = response.body?.getReader();
      try {
        while (reader && size < limit) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(Buffer.from(value));
          size += value.length;
        }
      } finally {
        await reader?.cancel().catch(() => undefined);
      }
    } catch (error) {
      if (error instanceof SvcError || this.#abort.signal.aborted) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = timeout.aborted
        ? `no answer within ${api.requestTimeoutMs / 1000} s`
        : (cause?.code ?? cause?.message ?? (error as Error).message);
      throw new SvcError('scheduler_unreachable', `cannot reach Nomad at ${api.url} (GET ${path}): ${why}`, {
        details: { method: 'GET', path, url: api.url },
        cause: error,
      });
    }
    return Buffer.concat(chunks, size).subarray(0, limit);
  }

  #failed(log: AllocLog, error: unknown): void {
    const message = (error as Error).message;
    if (error instanceof SvcError && error.code === 'not_found') {
      // Nomad's answer while the task has not written yet (client/fs_endpoint.go notFoundErr): wait.
      if (/log entry for task .* not found/.test(message) && !log.ended) {
        log.nextAt = Date.now() + this.options.pollMs;
        return;
      }
      // The allocation is gone (garbage-collected, or the cluster lost it): its later lines are lost.
      if (!log.ended) this.#emit(log.id, 'system', `stopped reading the logs of allocation ${log.id}: ${message}`);
      this.#finish(log);
      return;
    }
    if (!this.#failing) {
      this.#failing = true;
      this.#emit(log.id, 'system', `cannot read the logs of allocation ${log.id} (${message}); svc keeps trying, less often`);
    }
    log.delayMs = Math.min(log.delayMs * 2, MAX_BACKOFF_MS);
    log.nextAt = Date.now() + log.delayMs;
  }

  /** The allocation was read to its end: its unfinished lines are complete now. */
  #finish(log: AllocLog): void {
    for (const stream of log.streams) {
      const partial = stream.flush();
      if (partial) this.#emit(log.id, stream.type, partial);
    }
    log.done = true;
    if (!this.options.watcher.allocs.has(log.id)) this.#allocs.delete(log.id);
  }

  #emit(container: string, stream: LogLine['stream'], text: Buffer | string): void {
    const line = typeof text === 'string' ? text : text.toString('utf8').replace(/\r$/, '');
    this.options.sink({ unit: this.options.key, container, stream, text: line, time: new Date() });
  }
}

/** Whether the allocation's task has started, so that it may have written logs. */
function started(stub: AllocationStub, task: string): boolean {
  return stub.ClientStatus !== 'pending' || Boolean(stub.TaskStates?.[task]?.StartedAt);
}

function lastBytes(bytes: Buffer, count: number): Buffer {
  return bytes.length > count ? bytes.subarray(bytes.length - count) : bytes;
}

/** The largest cut at or below `at` that does not split a UTF-8 character. */
function utf8Boundary(bytes: Buffer, at: number): number {
  let cut = at;
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut -= 1;
  return cut > 0 ? cut : at;
}
