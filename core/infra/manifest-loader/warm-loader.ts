/**
 * `svc serve`'s warm helper: one long-lived `python -m svc._dev` (SDK:
 * svc/_dev) that keeps svc imported and, per request, snapshots the project
 * as its bundle would hold it and — unless it is the version already running
 * — writes the bundle and builds the manifest in a child forked off itself,
 * which imports the user's module fresh. One round trip per save instead of
 * two new interpreters (`svc.manifest`, `svc.bundle`), each of which costs
 * hundreds of milliseconds before it reads a file. Its answers are read
 * exactly as those commands' output are (manifestFromRun, bundleFromRun), so
 * errors are the same.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { bundleFromRun, type CreatedBundle } from '../bundles/create.js';
import { SvcError } from '../../model/errors.js';
import { sdkPythonPath } from '../../model/paths.js';
import { splitLines } from '../processes/lines.js';
import { manifestFromRun, resolveManifestTarget, type LoadedManifest } from './load.js';

export interface WarmLoaderOptions {
  /** Default: $SVC_PYTHON, else `python3`. */
  readonly python?: string;
  /** Lines the helper itself writes on stderr (never the user's: those come with the manifest). */
  readonly log?: (line: string) => void;
}

export interface ProjectReadRequest {
  /** A `.py` file or a module name, as for loadManifest. */
  readonly target: string;
  readonly cwd?: string;
  /** The digest of the version running: when the project still has it, nothing is written or imported. */
  readonly unchanged: string | null;
  /** Where the bundle goes. */
  readonly out: string;
  readonly maxBytes?: number;
  readonly timeoutMs?: number;
  /** Folders left out of the snapshot and the bundle (svc's data and cache dirs, when inside the project). */
  readonly exclude?: readonly string[];
}

export type ProjectRead =
  | { readonly unchanged: true; readonly digest: string; readonly dirs: readonly string[] }
  | {
      readonly unchanged: false;
      readonly digest: string;
      readonly dirs: readonly string[];
      readonly manifest: LoadedManifest;
      readonly bundle: CreatedBundle;
    };

/** The helper is gone (or never started): the caller reads the project the cold way. */
export class HelperUnavailable extends Error {}

interface Answer {
  readonly id?: number;
  readonly error?: string;
  readonly digest?: string;
  readonly dirs?: string[];
  readonly unchanged?: boolean;
  readonly bundle?: { code: number | null; stdout: string; stderr: string };
  readonly manifest?: { code: number | null; signal: string | null; stdout: string; stderr: string; timed_out: boolean };
}

export class WarmLoader {
  readonly python: string;
  readonly #child: ChildProcess;
  readonly #ready: Promise<void>;
  #gone: string | null = null;
  #serial = 0;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #waiting = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>();
  readonly #killGroup = () => this.#kill();

  constructor(options: WarmLoaderOptions = {}) {
    this.python = options.python ?? process.env.SVC_PYTHON ?? 'python3';
    const inherited = process.env.PYTHONPATH;
    // `--parent` names this process in the helper's command line (ps, tests); the helper ignores it.
    this.#child = spawn(this.python, ['-m', 'svc._dev', '--parent', String(process.pid)], {
      // Not the project: the helper's own imports must never find the user's files (json.py…).
      cwd: sdkPythonPath,
      env: {
        ...process.env,
        PYTHONPATH: inherited ? `${sdkPythonPath}${path.delimiter}${inherited}` : sdkPythonPath,
        PYTHONDONTWRITEBYTECODE: '1',
        PYTHONIOENCODING: 'utf-8',
        PYTHONSAFEPATH: '1',
      },
      // Its own group, killed when svc exits; its stdin is its lifeline (and its requests).
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    process.on('exit', this.#killGroup);
    this.#child.stdin!.on('error', () => {});
    let ready: () => void = () => {};
    let failed: (error: Error) => void = () => {};
    this.#ready = new Promise<void>((resolve, reject) => {
      ready = resolve;
      failed = reject;
    });
    this.#ready.catch(() => {});
    splitLines(this.#child.stderr, (line) => options.log?.(line));
    splitLines(this.#child.stdout, (line) => {
      let answer: Answer & { ready?: boolean };
      try {
        answer = JSON.parse(line) as Answer & { ready?: boolean };
      } catch {
        options.log?.(line);
        return;
      }
      if (answer.ready) return ready();
      const waiter = answer.id === undefined ? undefined : this.#waiting.get(answer.id);
      if (!waiter) return;
      this.#waiting.delete(answer.id!);
      waiter.resolve(answer);
    });
    const gone = (why: string) => {
      this.#gone ??= why;
      process.off('exit', this.#killGroup);
      const error = new HelperUnavailable(`the warm helper ${why}`);
      failed(error);
      for (const waiter of this.#waiting.values()) waiter.reject(error);
      this.#waiting.clear();
    };
    this.#child.on('error', (error) => gone(`could not start: ${error.message}`));
    this.#child.on('exit', (code, signal) => gone(`exited with ${signal ? `signal ${signal}` : `code ${code}`}`));
  }

  /** Why it cannot answer any more; null while it can. */
  get gone(): string | null {
    return this.#gone;
  }

  /** Reads the project; rejects with HelperUnavailable when the helper is gone, else as loadManifest and createBundle do. */
  read(request: ProjectReadRequest): Promise<ProjectRead> {
    const next = this.#queue.then(() => this.#read(request));
    this.#queue = next.catch(() => {});
    return next;
  }

  async #read(request: ProjectReadRequest): Promise<ProjectRead> {
    const target = await resolveManifestTarget({
      target: request.target,
      cwd: request.cwd,
      python: this.python,
      timeoutMs: request.timeoutMs,
    });
    await this.#ready;
    const id = ++this.#serial;
    const answer = await new Promise<Answer>((resolve, reject) => {
      if (this.#gone !== null) return reject(new HelperUnavailable(`the warm helper ${this.#gone}`));
      this.#waiting.set(id, { resolve, reject });
      this.#child.stdin!.write(
        `${JSON.stringify({
          id,
          root: target.root,
          target: target.argument,
          cwd: target.root,
          out: path.resolve(request.out),
          max_bytes: request.maxBytes ?? null,
          unchanged: request.unchanged,
          timeout: target.timeoutMs / 1000,
          exclude: (request.exclude ?? []).map((dir) => path.resolve(dir)),
        })}\n`,
      );
    });
    if (answer.error !== undefined) throw new SvcError('internal', `the warm helper refused a request: ${answer.error}`);
    const reproduce = `${this.python} -m svc.bundle ${target.root} --out ${request.out}`;
    const bundleRun = answer.bundle;
    if (answer.digest === undefined || (answer.unchanged !== true && bundleRun === undefined)) {
      // Only a project it could not even list has no digest: that is the bundle's failure.
      bundleFromRun(
        { code: bundleRun?.code ?? 1, signal: null, stdout: [], stderr: lines(bundleRun?.stderr ?? '') },
        { root: target.root, python: this.python, reproduce },
      );
      throw new SvcError('internal', 'the warm helper answered without a digest');
    }
    const dirs = answer.dirs ?? [];
    if (answer.unchanged === true) return { unchanged: true, digest: answer.digest, dirs };
    const bundle = bundleFromRun(
      { code: bundleRun!.code, signal: null, stdout: lines(bundleRun!.stdout), stderr: lines(bundleRun!.stderr) },
      { root: target.root, python: this.python, reproduce },
    );
    const run = answer.manifest;
    if (!run) throw new SvcError('internal', 'the warm helper answered without a manifest');
    const manifest = manifestFromRun(
      { code: run.code, signal: run.signal as NodeJS.Signals | null, stdout: run.stdout, stderr: run.stderr, timedOut: run.timed_out },
      target,
    );
    return { unchanged: false, digest: answer.digest, dirs, manifest, bundle };
  }

  /** Stops the helper (and the child it waits for); safe to call twice. */
  close(): void {
    process.off('exit', this.#killGroup);
    this.#child.stdin?.end();
    this.#kill();
    const pid = this.#child.pid;
    if (pid === undefined || !this.#running()) return;
    // A helper stuck in a C call: its group goes after a grace period.
    setTimeout(() => {
      if (!this.#running()) return;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }, 2_000).unref();
  }

  /** SIGTERM: the helper kills the child it waits for (in a group of its own), then exits; its lifeline closes with svc anyway. */
  #kill(): void {
    if (!this.#running()) return;
    try {
      this.#child.kill('SIGTERM');
    } catch {
      // Gone already.
    }
  }

  #running(): boolean {
    return this.#child.pid !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }
}

function lines(text: string): string[] {
  const all = text.split(/\r?\n/);
  while (all.length > 0 && all[all.length - 1] === '') all.pop();
  return all;
}
