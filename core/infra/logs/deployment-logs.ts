/**
 * The log lines of each deployment (workspace, app, stage, workload), kept
 * in memory across its versions so that a redeploy keeps the history: what
 * `GET /api/v1/apps/:app/deployments/:workload/logs` reads and follows.
 *
 * Fed by the driver's LogSink: a line's deployment comes from its unit key
 * (`<ws>/<app>/<stage>@<serial>/<workload>` or `<ws>/<app>/<stage>/<workload>`,
 * core/model/deployment-keys.ts), parsed here, so nothing has to register units.
 * The version of a container line is the one `setVersion` recorded for its
 * unit, when the manager told; image build lines (`addBuildLine`) carry theirs.
 *
 * Bounded per deployment: the last `maxLines` lines or `maxBytes` of text,
 * whichever is reached first; a line longer than `maxLineBytes` is cut there
 * and marked. With a `dir` (svc server), the lines of stage `deployed` are also
 * written to files there (core/infra/logs/log-files.ts, same bounds) and `restore`
 * reads them back after a restart; previews and remote runs stay in memory.
 */
import type { LogLine, LogSink } from '../scheduler/types.js';
import { LogFiles } from './log-files.js';
import type { DeploymentLogKey, DeploymentLogLine, DeploymentLogOptions, LogSubscriber } from './types.js';

export type { DeploymentLogKey, DeploymentLogLimits, DeploymentLogLine, DeploymentLogOptions, LogSubscriber } from './types.js';

/** The only stage whose lines outlive svc: previews and remote runs end with the process that ran them. */
const DURABLE_STAGE = 'deployed';

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 1024 * 1024;
export const DEFAULT_MAX_LINE_BYTES = 8 * 1024;
export const TRUNCATED_MARKER = ' … [truncated]';

interface Kept {
  readonly lines: DeploymentLogLine[];
  /** Index of the oldest kept line in `lines` (shifted lazily). */
  head: number;
  bytes: number;
  readonly subscribers: Set<LogSubscriber>;
}

export function deploymentLogKey(key: DeploymentLogKey): string {
  return `${key.workspace}/${key.app}/${key.stage}/${key.workload}`;
}

/** The deployment of a unit key, or null for a key of another shape. */
export function deploymentOfUnit(unit: string): DeploymentLogKey | null {
  const parts = unit.split('/');
  if (parts.length !== 4 || parts.some((part) => part === '')) return null;
  const [workspace, app, stageAndSerial, workload] = parts as [string, string, string, string];
  const stage = stageAndSerial.replace(/@\d+$/, '');
  return { workspace, app, stage, workload };
}

export class DeploymentLogs {
  readonly #kept = new Map<string, Kept>();
  readonly #versions = new Map<string, number>();
  readonly #maxLines: number;
  readonly #maxBytes: number;
  readonly #maxLineBytes: number;
  readonly #files: LogFiles | null;

  constructor(options: DeploymentLogOptions = {}) {
    this.#maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    const { dir, report } = options;
    this.#files =
      dir === undefined ? null : new LogFiles({ dir, maxLines: this.#maxLines, maxBytes: this.#maxBytes, ...(report ? { report } : {}) });
  }

  /** Deletes the older log segment of every deployment on disk (a full disk); the bytes freed. */
  trimOlderFiles(): Promise<number> {
    return this.#files?.trimOlder() ?? Promise.resolve(0);
  }

  /** Reads the stored lines of every deployed deployment back (ahead of any this process already kept). Call once, before serving. */
  async restore(): Promise<void> {
    for (const { key, lines } of (await this.#files?.load()) ?? []) {
      const kept = this.#keptOf(deploymentLogKey({ ...key, stage: DURABLE_STAGE }));
      const newer = kept.lines.splice(0).slice(kept.head);
      Object.assign(kept, { head: 0, bytes: 0 });
      for (const line of [...lines, ...newer]) this.#keep(kept, { ...line, text: this.#cut(line.text) });
    }
  }

  /** A LogSink that records each line here, then passes it on to `next`. */
  sink(next: LogSink = () => {}): LogSink {
    return (line) => {
      this.addUnitLine(line);
      next(line);
    };
  }

  /** Records the version a unit runs, so its lines carry it. */
  setVersion(unit: string, version: number): void {
    this.#versions.set(unit, version);
  }

  addUnitLine(line: LogLine): void {
    const key = deploymentOfUnit(line.unit);
    if (key === null) return;
    const version = this.#versions.get(line.unit);
    this.add(key, {
      time: line.time.toISOString(),
      container: line.container,
      stream: line.stream,
      text: line.text,
      ...(version === undefined ? {} : { version }),
    });
  }

  /** An image build line of a deploy of this workload. */
  addBuildLine(key: DeploymentLogKey, text: string, version?: number): void {
    this.add(key, {
      time: new Date().toISOString(),
      container: 'build',
      stream: 'system',
      text,
      ...(version === undefined ? {} : { version }),
    });
  }

  add(key: DeploymentLogKey, line: DeploymentLogLine): void {
    const kept = this.#keptOf(deploymentLogKey(key));
    const entry = { ...line, text: this.#cut(line.text) };
    this.#keep(kept, entry);
    if (key.stage === DURABLE_STAGE) this.#files?.append(key, entry);
    for (const subscriber of kept.subscribers) subscriber.line(entry);
  }

  /** Adds the line to the kept ones, dropping the oldest past the bounds. */
  #keep(kept: Kept, entry: DeploymentLogLine): void {
    kept.lines.push(entry);
    kept.bytes += Buffer.byteLength(entry.text);
    while (kept.lines.length - kept.head > this.#maxLines || (kept.bytes > this.#maxBytes && kept.lines.length - kept.head > 1)) {
      kept.bytes -= Buffer.byteLength(kept.lines[kept.head]!.text);
      kept.head++;
    }
    if (kept.head > 1024 && kept.head * 2 > kept.lines.length) {
      kept.lines.splice(0, kept.head);
      kept.head = 0;
    }
  }

  #keptOf(id: string): Kept {
    let kept = this.#kept.get(id);
    if (!kept) this.#kept.set(id, (kept = { lines: [], head: 0, bytes: 0, subscribers: new Set() }));
    return kept;
  }

  /** The kept lines, oldest first. */
  lines(key: DeploymentLogKey): DeploymentLogLine[] {
    const kept = this.#kept.get(deploymentLogKey(key));
    return kept ? kept.lines.slice(kept.head) : [];
  }

  /** Follows the deployment: `subscriber` gets every line added from now on. Returns the unsubscribe. */
  subscribe(key: DeploymentLogKey, subscriber: LogSubscriber): () => void {
    const kept = this.#keptOf(deploymentLogKey(key));
    kept.subscribers.add(subscriber);
    const subscribers = kept.subscribers;
    return () => void subscribers.delete(subscriber);
  }

  /** How many followers the deployment has (for tests and status). */
  subscriberCount(key: DeploymentLogKey): number {
    return this.#kept.get(deploymentLogKey(key))?.subscribers.size ?? 0;
  }

  /** The deployment is deleted: its lines (and files) go, and its followers get `end`. */
  forget(key: DeploymentLogKey): void {
    const id = deploymentLogKey(key);
    const kept = this.#kept.get(id);
    this.#kept.delete(id);
    if (key.stage === DURABLE_STAGE) this.#files?.remove(key);
    for (const unit of this.#versions.keys()) {
      const of = deploymentOfUnit(unit);
      if (of !== null && deploymentLogKey(of) === id) this.#versions.delete(unit);
    }
    for (const subscriber of kept?.subscribers ?? []) subscriber.end('deleted');
  }

  /**
   * After a restart: forgets the stored lines of deployed deployments that do
   * not exist (svc stopped between deleting one's records and its files), so
   * that an app made later under the same name starts with no history.
   */
  forgetAllBut(exists: (key: DeploymentLogKey) => boolean): void {
    for (const id of [...this.#kept.keys()]) {
      const key = deploymentOfUnit(id);
      if (key !== null && key.stage === DURABLE_STAGE && !exists(key)) this.forget(key);
    }
  }

  /** svc is stopping: every follower gets `end` (at once), then the lines not yet written reach their files. */
  async close(): Promise<void> {
    for (const kept of this.#kept.values()) {
      const subscribers = [...kept.subscribers];
      kept.subscribers.clear();
      for (const subscriber of subscribers) subscriber.end('closing');
    }
    await this.#files?.close();
  }

  #cut(text: string): string {
    if (Buffer.byteLength(text) <= this.#maxLineBytes) return text;
    // Cut on a character boundary: decoding a cut UTF-8 sequence would add a replacement character.
    const bytes = Buffer.from(text).subarray(0, this.#maxLineBytes);
    return new TextDecoder('utf-8', { fatal: false }).decode(bytes).replace(/\uFFFD$/, '') + TRUNCATED_MARKER;
  }
}
