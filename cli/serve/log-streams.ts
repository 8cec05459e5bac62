/**
 * The log streams `svc serve --server` keeps open: one Server-Sent Events
 * stream per workload of the preview (`GET …/preview/deployments/:workload/logs`
 * with `Accept: text/event-stream`), each line printed with its workload.
 * They are also what keeps the preview alive on the server (its idle timeout
 * counts followers), so a stream that drops is opened again while its
 * workload is in the set; `sync` opens the streams of workloads a reload
 * added and closes those of workloads it removed. A reconnected stream
 * replays the lines the server keeps: those already printed are skipped.
 */
import type { DeploymentLogLine } from '../../core/infra/logs/types.js';
import { toSvcError } from '../../core/model/errors.js';
import type { ApiClient } from '../api-client.js';
import { sleep } from '../context.js';

export interface LogStream {
  /** Tells streams apart (`<app>/<workload>`). */
  readonly key: string;
  /** What its lines are printed with (the workload). */
  readonly label: string;
  /** The API path of its logs. */
  readonly path: string;
}

export interface LogStreamsOptions {
  readonly client: Pick<ApiClient, 'events'>;
  readonly print: (label: string, line: DeploymentLogLine) => void;
  readonly warn: (message: string) => void;
  /** The first wait before opening a stream again after it failed; it doubles up to 16 times that. */
  readonly retryMs?: number;
}

interface Follower {
  readonly stream: LogStream;
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

export class LogStreams {
  readonly #options: LogStreamsOptions;
  readonly #followers = new Map<string, Follower>();
  #closed = false;

  constructor(options: LogStreamsOptions) {
    this.#options = options;
  }

  /** Follows exactly these streams: opens the new ones, closes those not listed. */
  sync(streams: readonly LogStream[]): void {
    if (this.#closed) return;
    const wanted = new Map(streams.map((stream) => [stream.key, stream]));
    for (const [key, follower] of this.#followers) {
      if (wanted.get(key)?.path !== follower.stream.path) this.#end(key);
    }
    for (const stream of wanted.values()) {
      if (this.#followers.has(stream.key)) continue;
      const abort = new AbortController();
      const done = this.#follow(stream, abort.signal);
      this.#followers.set(stream.key, { stream, abort, done });
    }
  }

  /** The keys of the streams followed now. */
  get keys(): string[] {
    return [...this.#followers.keys()];
  }

  /** Closes every stream; resolves once they are closed. */
  async close(): Promise<void> {
    this.#closed = true;
    const done = [...this.#followers.values()].map((follower) => follower.done);
    for (const key of [...this.#followers.keys()]) this.#end(key);
    await Promise.all(done);
  }

  #end(key: string): void {
    this.#followers.get(key)?.abort.abort();
    this.#followers.delete(key);
  }

  async #follow(stream: LogStream, signal: AbortSignal): Promise<void> {
    const { client, print, warn } = this.#options;
    const retryMs = this.#options.retryMs ?? 500;
    const printed = new PrintedLines();
    let failures = 0;
    /** A drop was reported: the next line says the stream is back. */
    let reported = false;
    /** The server said the workload was deleted: finding it gone next is no news. */
    let deleted = false;
    while (!signal.aborted) {
      let why: string;
      try {
        why = 'the server closed the stream';
        for await (const event of client.events(stream.path, signal)) {
          deleted = false;
          if (event.event === 'log') {
            const line = JSON.parse(event.data) as DeploymentLogLine;
            if (reported) warn(`${stream.label}: following its logs again`);
            reported = false;
            failures = 0;
            if (printed.isNew(line)) print(stream.label, line);
          } else if (event.event === 'end') {
            const reason = (JSON.parse(event.data) as { reason?: string }).reason ?? 'no reason given';
            // A workload a reload removed: the answer of the reload closes its stream (else the next connection finds it gone).
            deleted = reason === 'deleted';
            why = `the stream ended (${reason})`;
            break;
          }
        }
      } catch (error) {
        if (signal.aborted) break;
        const failure = toSvcError(error);
        // The workload (or the whole preview) is gone: nothing is left to follow.
        if (failure.code === 'not_found') {
          // After `end: deleted` the reload's answer usually closes the stream first; when it is slower, this says nothing new.
          if (!deleted) warn(`${stream.label}: ${failure.message} Stopped following its logs.`);
          if (this.#followers.get(stream.key)?.stream === stream) this.#followers.delete(stream.key);
          break;
        }
        why = failure.message;
      }
      if (signal.aborted) break;
      if (!reported && !deleted) {
        warn(`${stream.label}: lost its log stream (${why}); opening it again`);
        reported = true;
      }
      await sleep(retryMs * 2 ** Math.min(failures++, 4), signal);
      printed.replay();
    }
  }
}

/**
 * Which lines of a stream were printed, to skip them when a new connection
 * replays the kept lines: those older than the last printed, and as many of
 * those at its time as were printed.
 */
export class PrintedLines {
  #lastTime = '';
  /** The lines printed at #lastTime, by content. */
  #atLast = new Map<string, number>();
  /** While a replay reaches #lastTime: how many of those are still to skip. */
  #skip = new Map<string, number>();

  /** A new connection starts: its first lines are those printed already. */
  replay(): void {
    this.#skip = new Map(this.#atLast);
  }

  /** Whether to print the line (and it counts as printed then). */
  isNew(line: DeploymentLogLine): boolean {
    if (line.time < this.#lastTime) return false;
    const key = `${line.container}\u0000${line.stream}\u0000${line.text}`;
    if (line.time === this.#lastTime) {
      const left = this.#skip.get(key) ?? 0;
      if (left > 0) {
        this.#skip.set(key, left - 1);
        return false;
      }
    } else {
      this.#lastTime = line.time;
      this.#atLast = new Map();
      this.#skip = new Map();
    }
    this.#atLast.set(key, (this.#atLast.get(key) ?? 0) + 1);
    return true;
  }
}
