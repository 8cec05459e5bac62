/**
 * The log lines of deployed deployments, kept on disk so that `svc server`
 * gets them back after a restart (clean or kill -9): JSON lines in
 * `<dir>/<workspace>/<app>/<workload>.jsonl`, then `<workload>.1.jsonl`.
 *
 * Bounded like the in-memory copy: once the current segment holds the bound
 * (lines, or bytes of text), it is renamed to `.1` (replacing the older one)
 * and a new one starts, so a deployment takes at most two bounds on disk (plus
 * the JSON framing, ~100 bytes a line), and the two segments always hold at
 * least what memory keeps.
 *
 * Log lines are not acknowledged writes, so no fsync: they are buffered and
 * appended once per deployment every `flushMs` (and on `flush`/`close`). A
 * crash loses at most the last batch and may leave a torn last line, which
 * `load` skips. File errors are reported once per run of failures, never
 * thrown: the caller keeps its lines in memory either way.
 */
import { readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DeploymentLogKey, DeploymentLogLine } from './types.js';
import { appendToSegment, encodeLine, lastWithin, parseSegment, validName as valid, type SegmentCount } from './log-segments.js';

/** A deployment of the stage `deployed`, the only one written. */
export type LogFileKey = Omit<DeploymentLogKey, 'stage'>;

export interface LogFilesOptions {
  readonly dir: string;
  readonly maxLines: number;
  readonly maxBytes: number;
  /** How long lines wait in memory before they are appended; 100 ms by default. */
  readonly flushMs?: number;
  readonly report?: (error: unknown) => void;
}

export interface StoredLog {
  readonly key: LogFileKey;
  /** The last lines within the bounds, oldest first. */
  readonly lines: DeploymentLogLine[];
}

export class LogFiles {
  readonly #options: LogFilesOptions;
  readonly #pending = new Map<string, { key: LogFileKey; lines: DeploymentLogLine[] }>();
  readonly #segments = new Map<string, SegmentCount>();
  /** The file operations of each deployment, one after the other, so a remove never races an append. */
  readonly #queues = new Map<string, Promise<void>>();
  readonly #refused = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #loaded = false;
  #failing = false;

  constructor(options: LogFilesOptions) {
    this.#options = options;
  }

  /** Buffers the line; it reaches the file within `flushMs`. */
  append(key: LogFileKey, line: DeploymentLogLine): void {
    const id = this.#id(key);
    if (id === null) return;
    let batch = this.#pending.get(id);
    if (!batch) this.#pending.set(id, (batch = { key, lines: [] }));
    batch.lines.push(line);
    this.#timer ??= setTimeout(() => void this.flush(), this.#options.flushMs ?? 100).unref();
  }

  /** Appends every buffered line; resolves once they are written (or failed and reported). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batches = [...this.#pending];
    this.#pending.clear();
    await Promise.all(batches.map(([id, { key, lines }]) => this.#queue(id, () => this.#write(id, key, lines))));
  }

  /**
   * Deletes every deployment's older segment (`<workload>.1.jsonl`): what svc lets go of first when
   * its disk is full, before it refuses a state write. The current segments, and the lines kept in
   * memory, stay. Resolves with the bytes freed.
   */
  async trimOlder(): Promise<number> {
    let freed = 0;
    for (const file of await olderSegments(this.#options.dir)) {
      const size = (await stat(file).catch(() => null))?.size ?? 0;
      await rm(file, { force: true });
      freed += size;
    }
    return freed;
  }

  /** The deployment is deleted: its buffered lines and its files go. */
  remove(key: LogFileKey): void {
    const id = this.#id(key);
    if (id === null) return;
    this.#pending.delete(id);
    void this.#queue(id, async () => {
      const { current, previous, appDir } = this.#files(key);
      this.#segments.delete(id);
      await rm(current, { force: true });
      await rm(previous, { force: true });
      // Empty folders go too; one that still holds another deployment's files stays.
      await rmdir(appDir)
        .then(() => rmdir(path.dirname(appDir)))
        .catch(() => {});
    });
  }

  /** Flushes, and waits for every file operation under way. */
  async close(): Promise<void> {
    await this.flush();
    await Promise.all(this.#queues.values());
  }

  /** Every stored deployment's last lines, older segment first. Call before the first `append`. */
  async load(): Promise<StoredLog[]> {
    this.#loaded = true;
    const stored: StoredLog[] = [];
    for (const workspace of await this.#list(this.#options.dir, true)) {
      for (const app of await this.#list(path.join(this.#options.dir, workspace), true)) {
        const names = await this.#list(path.join(this.#options.dir, workspace, app), false);
        const workloads = new Set(
          names
            .map((name) => /^([a-z0-9-]+)(\.1)?\.jsonl$/.exec(name)?.[1])
            .filter((name): name is string => name !== undefined && valid(name)),
        );
        for (const workload of workloads) {
          const key = { workspace, app, workload };
          const { current, previous } = this.#files(key);
          const older = await this.#read(previous);
          const newer = await this.#read(current);
          this.#segments.set(this.#id(key)!, newer.count);
          const lines = lastWithin([...older.lines, ...newer.lines], this.#options.maxLines, this.#options.maxBytes);
          if (lines.length > 0) stored.push({ key, lines });
        }
      }
    }
    return stored;
  }

  async #write(id: string, key: LogFileKey, lines: DeploymentLogLine[]): Promise<void> {
    const { current, previous } = this.#files(key);
    // After `load`, a deployment it did not find has no file yet; without it, an existing file may end torn.
    let segment = this.#segments.get(id);
    if (!segment) this.#segments.set(id, (segment = { lines: 0, bytes: 0, torn: !this.#loaded }));
    try {
      let chunk = segment.torn ? '\n' : '';
      for (const line of lines) {
        if (segment.lines >= this.#options.maxLines || segment.bytes >= this.#options.maxBytes) {
          if (chunk !== '') await appendToSegment(current, chunk);
          chunk = '';
          await rename(current, previous).catch((error: NodeJS.ErrnoException) => {
            if (error.code !== 'ENOENT') throw error;
          });
          Object.assign(segment, { lines: 0, bytes: 0, torn: false });
        }
        chunk += encodeLine(line);
        segment.lines += 1;
        segment.bytes += Buffer.byteLength(line.text);
      }
      if (chunk !== '') await appendToSegment(current, chunk);
      segment.torn = false;
      this.#failing = false;
    } catch (error) {
      segment.torn = true;
      this.#fail(new Error(`could not write the logs of ${id} to ${path.dirname(current)}: ${(error as Error).message}`, { cause: error }));
    }
  }

  async #read(file: string): Promise<ReturnType<typeof parseSegment>> {
    return parseSegment(await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => this.#missing(error, file, '')));
  }

  /** The entries of a folder (only valid names when `named`). */
  async #list(dir: string, named: boolean): Promise<string[]> {
    const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => this.#missing(error, dir, [] as string[]));
    return named ? names.filter(valid) : names;
  }

  /** What a missing file or folder reads as; another error is reported, and reads as missing. */
  #missing<T>(error: NodeJS.ErrnoException, file: string, empty: T): T {
    if (error.code !== 'ENOENT') this.#fail(new Error(`could not read the logs in ${file}: ${error.message}`, { cause: error }));
    return empty;
  }

  #queue(id: string, op: () => Promise<void>): Promise<void> {
    const next = (this.#queues.get(id) ?? Promise.resolve()).then(op).catch((error: unknown) => this.#fail(error));
    this.#queues.set(id, next);
    void next.then(() => this.#queues.get(id) === next && this.#queues.delete(id));
    return next;
  }

  #files(key: LogFileKey): { current: string; previous: string; appDir: string } {
    const appDir = path.join(this.#options.dir, key.workspace, key.app);
    return { current: path.join(appDir, `${key.workload}.jsonl`), previous: path.join(appDir, `${key.workload}.1.jsonl`), appDir };
  }

  /** The deployment's id, or null (reported once) when a name could make a path outside the folder. */
  #id(key: LogFileKey): string | null {
    const id = `${key.workspace}/${key.app}/${key.workload}`;
    if (valid(key.workspace) && valid(key.app) && valid(key.workload)) return id;
    if (!this.#refused.has(id)) {
      this.#refused.add(id);
      this.#report(new Error(`not writing the logs of ${JSON.stringify(id)} to disk: a name is not a valid DNS label`));
    }
    return null;
  }

  #fail(error: unknown): void {
    if (this.#failing) return;
    this.#failing = true;
    this.#report(error);
  }

  #report(error: unknown): void {
    try {
      this.#options.report?.(error);
    } catch {
      // A reporter that throws must not take the server down with it.
    }
  }
}

/** `<dir>/<workspace>/<app>/<workload>.1.jsonl` of every deployment. */
async function olderSegments(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries.filter((entry) => entry.endsWith('.1.jsonl')).map((entry) => path.join(dir, entry));
}
