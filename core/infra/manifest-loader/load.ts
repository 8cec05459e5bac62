/**
 * Describes a user's app by asking the Python SDK: runs
 * `<python> -m svc.manifest <target>` (the only code that imports user code)
 * and turns its output into the resolved model, or its failure into an
 * SvcError that carries the Python traceback. An import that hangs (waiting
 * for input, a network call at import time) is killed after a timeout.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pythonNotFound } from '../images/find-python.js';
import { SvcError } from '../../model/errors.js';
import { sdkPythonPath } from '../../model/paths.js';
import { resolveApp } from '../../model/workload/resolve.js';
import type { AppSpec } from '../../model/workload/types.js';
import { parseManifestOutput } from '../../model/workload/manifest/parse.js';
import type { ManifestV1 } from '../../model/workload/manifest/types.js';

export interface LoadManifestOptions {
  /** A `.py` file (the project root is its folder) or a module name importable from `cwd`. */
  readonly target: string;
  /** Default: process.cwd(). */
  readonly cwd?: string;
  /** Default: $SVC_PYTHON, else `python3`. */
  readonly python?: string;
  /**
   * How long importing the app may take before Python (and every process it
   * started) is killed and `manifest_failed` reported. Default: $SVC_MANIFEST_TIMEOUT
   * (seconds), else 120 s.
   */
  readonly timeoutMs?: number;
}

/** How long importing the app may take when neither `timeoutMs` nor SVC_MANIFEST_TIMEOUT says. */
export const defaultManifestTimeoutMs = 120_000;

/** The longest delay `setTimeout` keeps; a longer one would fire at once. */
const maxTimerMs = 2 ** 31 - 1;

export interface LoadedManifest {
  /** The project root: the folder the module is imported from. */
  readonly root: string;
  readonly spec: AppSpec;
  readonly raw: ManifestV1;
  /** The app's `svc.Secret.from_dict` values, which its workloads name `@<i>`: sent beside `raw` (the API's `inlineSecrets`), never in it. */
  readonly inlineSecrets?: readonly Record<string, string>[];
  /** Lines the user's code wrote to stderr (or printed) while it was imported. */
  readonly logs: readonly string[];
}

/** How `python -m svc.manifest` ended, from a process or from the warm helper (warm-loader.ts). */
export interface PythonRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

/** What to describe, resolved: where it is imported from and how long it may take. */
export interface ManifestTarget {
  /** As the user gave it (messages quote it). */
  readonly target: string;
  readonly python: string;
  /** The argument of `python -m svc.manifest`: an absolute file, or the module name. */
  readonly argument: string;
  /** The project root, where Python runs. */
  readonly root: string;
  readonly timeoutMs: number;
}

export async function loadManifest(opts: LoadManifestOptions): Promise<LoadedManifest> {
  return loadManifestOf(await resolveManifestTarget(opts));
}

/** loadManifest() of a target already resolved (and checked to exist). */
export async function loadManifestOf(target: ManifestTarget): Promise<LoadedManifest> {
  const run = await runPython(target.python, ['-m', 'svc.manifest', target.argument], target.root, target.timeoutMs);
  return manifestFromRun(run, target);
}

/** Resolves the target and checks that it exists (a typo in the path is not reported as a Python problem). */
export async function resolveManifestTarget(opts: LoadManifestOptions): Promise<ManifestTarget> {
  const cwd = path.resolve(opts.cwd ?? process.cwd());
  const python = opts.python ?? process.env.SVC_PYTHON ?? 'python3';
  const timeoutMs = manifestTimeoutMs(opts.timeoutMs);
  const isFile = opts.target.endsWith('.py');
  const argument = isFile ? path.resolve(cwd, opts.target) : opts.target;
  const root = isFile ? path.dirname(argument) : cwd;
  await assertExists(argument, root, isFile);
  return { target: opts.target, python, argument, root, timeoutMs };
}

/** The manifest `python -m svc.manifest` printed, or its failure as `manifest_failed` with the traceback. */
export function manifestFromRun(run: PythonRun, target: ManifestTarget): LoadedManifest {
  const { python, argument, root, timeoutMs } = target;
  const reproduce = `${python} -m svc.manifest ${argument}`;
  const stderr = run.stderr.trim();
  const details = { exitCode: run.code, signal: run.signal, stderr };
  if (run.timedOut) {
    const seconds = Number((timeoutMs / 1000).toFixed(3));
    throw new SvcError(
      'manifest_failed',
      `importing ${target.target} did not finish within ${seconds} s${stderr === '' ? '' : `; it printed:\n${stderr}`}`,
      {
        hint:
          'Something the app runs when it is imported waits: an import that waits for input, or a network call ' +
          '(a database, an HTTP request) at import time. Move that work into the functions that need it, or set ' +
          `SVC_MANIFEST_TIMEOUT (seconds) if importing really takes this long. To reproduce: ${reproduce}`,
        details: { timeoutMs, ...details },
      },
    );
  }
  if (run.code === 0) {
    const { raw, inlineSecrets } = parseManifestOutput(run.stdout);
    return { root, spec: resolveApp(raw), raw, logs: lines(run.stderr), ...(inlineSecrets === undefined ? {} : { inlineSecrets }) };
  }
  if (run.code === 1) {
    throw new SvcError('manifest_failed', `Python could not load ${target.target}:\n${stderr}`, {
      hint: `Fix the error the traceback points at, then try again (to reproduce: ${reproduce}).`,
      details,
    });
  }
  if (run.code === 2) {
    // Usage errors come after the import, so the user's own output may precede the one-line message.
    const message = lines(stderr).at(-1) ?? `svc.manifest rejected ${target.target}`;
    throw new SvcError('manifest_failed', message, {
      hint: 'Pass a .py file or an importable module name that defines exactly one svc.App at module level.',
      details,
    });
  }
  const how = run.signal === null ? `exited with code ${run.code}` : `was killed by ${run.signal}`;
  throw new SvcError('manifest_failed', `Python ${how} while describing ${target.target}${stderr === '' ? '' : `:\n${stderr}`}`, {
    hint: `To reproduce: ${reproduce}`,
    details,
  });
}

/** `timeoutMs` if given, else $SVC_MANIFEST_TIMEOUT (seconds), else the default; `config_invalid` for anything but a positive number. */
function manifestTimeoutMs(timeoutMs: number | undefined): number {
  if (timeoutMs !== undefined) {
    if (typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0) return Math.min(timeoutMs, maxTimerMs);
    throw new SvcError('config_invalid', `timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  }
  const raw = process.env.SVC_MANIFEST_TIMEOUT;
  if (raw === undefined || raw.trim() === '') return defaultManifestTimeoutMs;
  const seconds = Number(raw.trim());
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new SvcError('config_invalid', `SVC_MANIFEST_TIMEOUT must be a positive number of seconds, got ${JSON.stringify(raw)}`, {
      hint: `Set SVC_MANIFEST_TIMEOUT to how many seconds importing the app may take, such as 300, or unset it for the default of ${defaultManifestTimeoutMs / 1000}.`,
    });
  }
  return Math.min(seconds * 1000, maxTimerMs);
}

/** Fails before spawning, so a typo in the path is not reported as a Python problem. */
async function assertExists(argument: string, root: string, isFile: boolean): Promise<void> {
  const wanted = isFile ? argument : root;
  const found = await stat(wanted).catch(() => null);
  const ok = found !== null && (isFile ? found.isFile() : found.isDirectory());
  if (!ok) {
    throw new SvcError('manifest_failed', `${isFile ? 'File' : 'Folder'} not found: ${wanted}`, {
      hint: "Pass the path of your app's .py file, or a module name importable from the current folder.",
    });
  }
}

/**
 * Runs Python in its own process group, so that at the timeout the whole group
 * is killed: Python and whatever the user's import started. Whatever of the
 * group is left when Python exits is killed too, as is the group when this
 * Node process exits first.
 */
function runPython(python: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<PythonRun> {
  const inherited = process.env.PYTHONPATH;
  const env = {
    ...process.env,
    // The SDK comes first so `import svc` finds this platform's SDK, not an older pip-installed one.
    PYTHONPATH: inherited ? `${sdkPythonPath}${path.delimiter}${inherited}` : sdkPythonPath,
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONIOENCODING: 'utf-8',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let timedOut = false;
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const finish = (): void => {
      clearTimeout(timer);
      process.off('exit', killGroup);
    };
    process.on('exit', killGroup);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('exit', () => {
      clearTimeout(timer);
      killGroup();
      // A process that left the group (setsid) may still hold the pipes open: stop waiting for it shortly.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 1000).unref();
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      finish();
      if (error.code === 'ENOENT' || error.code === 'EACCES') {
        reject(pythonNotFound(python, error.code, error));
      } else reject(error);
    });
    child.on('close', (code, signal) => {
      finish();
      resolve({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        timedOut,
      });
    });
  });
}

function lines(text: string): string[] {
  const all = text.split(/\r?\n/);
  while (all.length > 0 && all[all.length - 1] === '') all.pop();
  return all;
}
