/**
 * uv, which builds images in about a tenth of pip's time. svc brings a pinned
 * version itself on first use: `pip install --target` from the index pip
 * already uses, into `<cacheDir>/tools/uv-<version>/`, once per cache dir. An
 * operator may point `uvPath` (SVC_UV) at a uv of their own instead.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { moveIntoPlace, removeAbandonedBuilds, temporaryPath } from './cache-entries.js';
import { runLogged } from './run-logged.js';
import type { BuildLog } from './types.js';
import { PIP_INSTALL } from './pip-command.js';

const run = promisify(execFile);

/** The uv svc brings: bump it deliberately, with the image tests. */
export const UV_VERSION = '0.13.9';
/** A failed attempt to bring uv is not retried for this long: every build would wait on pip again. */
const RETRY_AFTER_MS = 10 * 60_000;

export interface UvTool {
  readonly path: string;
  /** What `uv --version` says: "uv 0.13.9 (…)". */
  readonly version: string;
  readonly source: 'svc' | 'uvPath';
}

/** uv, or why it cannot be had. */
export type UvFound = { readonly uv: UvTool } | { readonly why: string };

export interface UvToolOptions {
  readonly cacheDir: string;
  /** The interpreter whose pip brings uv. */
  readonly python: string;
  /** `uvPath`: an operator's own uv; null: svc brings its own. */
  readonly uvPath: string | null;
}

const found = new Map<string, { readonly at: number; readonly result: Promise<UvFound> }>();

/** uv for builds: the operator's, or svc's own (brought once, then found in the cache dir). */
export async function findUv(options: UvToolOptions, emit: BuildLog): Promise<UvFound> {
  const key = JSON.stringify([path.resolve(options.cacheDir), options.python, options.uvPath]);
  const known = found.get(key);
  if (known) {
    const result = await known.result;
    if ('uv' in result || Date.now() - known.at < RETRY_AFTER_MS) return result;
  }
  // Set before the first await of this look: builds at the same moment share it.
  const result = options.uvPath === null ? ownUv(options, emit) : versionOf(options.uvPath, 'uvPath');
  found.set(key, { at: Date.now(), result });
  return result;
}

async function versionOf(binary: string, source: UvTool['source']): Promise<UvFound> {
  try {
    const { stdout } = await run(binary, ['--version'], { timeout: 30_000 });
    const version = stdout.trim();
    if (!/^uv \d+\.\d+\.\d+/.test(version)) return { why: `${binary} --version said ${JSON.stringify(version)}, not a uv version` };
    return { uv: { path: binary, version, source } };
  } catch (error) {
    return { why: `${binary} did not run (${(error as Error).message.split('\n')[0]})` };
  }
}

/** svc's own uv in the cache dir, brought with pip when missing. */
async function ownUv(options: UvToolOptions, emit: BuildLog): Promise<UvFound> {
  const tools = path.join(path.resolve(options.cacheDir), 'tools');
  const dir = path.join(tools, `uv-${UV_VERSION}`);
  const binary = path.join(dir, 'bin', 'uv');
  if (existsSync(binary)) {
    const there = await versionOf(binary, 'svc');
    if ('uv' in there) return there;
  }
  await mkdir(tools, { recursive: true });
  await removeAbandonedBuilds(tools);
  const tmp = temporaryPath(tools, `uv-${createHash('sha256').update(UV_VERSION).digest('hex').slice(0, 12)}`);
  emit(`bringing uv ${UV_VERSION} into ${dir} with pip (once per cache dir)`);
  const pipEnv = temporaryPath(tools, `pip-${createHash('sha256').update(options.python).digest('hex').slice(0, 12)}`);
  try {
    const pip = await pipOf(options.python, pipEnv, emit);
    await runLogged(
      {
        command: pip,
        args: [...PIP_INSTALL, '--no-deps', '--only-binary', ':all:', '--target', tmp, `uv==${UV_VERSION}`],
        what: `pip install uv==${UV_VERSION}`,
        hint: 'pip could not fetch uv from its index.',
      },
      emit,
    );
    const brought = await versionOf(path.join(tmp, 'bin', 'uv'), 'svc');
    if (!('uv' in brought)) return brought;
    await moveIntoPlace(tmp, dir, async (d) => existsSync(path.join(d, 'bin', 'uv')));
    return { uv: { ...brought.uv, path: binary } };
  } catch (error) {
    return { why: `pip could not bring uv ${UV_VERSION}: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}` };
  } finally {
    await rm(tmp, { recursive: true, force: true });
    await rm(pipEnv, { recursive: true, force: true });
  }
}

/**
 * An interpreter with pip: `python` itself, or, when it has none (Debian's python3 without
 * python3-pip, a venv made without pip), a throwaway venv that Python's own ensurepip gives pip.
 */
async function pipOf(python: string, throwaway: string, emit: BuildLog): Promise<string> {
  const hasPip = await run(python, ['-c', 'import pip'], { timeout: 30_000 }).then(
    () => true,
    () => false,
  );
  if (hasPip) return python;
  emit(`${python} has no pip: making a throwaway environment with Python's own (ensurepip)`);
  await runLogged(
    {
      command: python,
      args: ['-m', 'venv', throwaway],
      what: `${python} -m venv`,
      hint: 'This Python has neither pip nor ensurepip (on Debian: apt install python3-venv).',
    },
    emit,
  );
  return path.join(throwaway, 'bin', 'python');
}
