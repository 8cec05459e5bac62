/** Running generated Python clients in fresh Python processes, and the type checkers on them, for the exporter's tests. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ExportedFiles } from '../../../core/infra/plugin/types.js';
import { sdkPythonPath } from '../../../core/model/paths.js';
import { tempDir, testCacheDir } from '../../helpers/config.js';

export const python = process.env.SVC_PYTHON ?? 'python3';

/** The mypy.ini of a project that type-checks exported clients: strict, nothing else. */
export const CLIENT_MYPY_CONFIG = `[mypy]
strict = True
`;

/**
 * MYPYPATH for it: the SDK's source, so that mypy checks the SDK too, and the SDK's stubs of
 * the packages its runtime imports only in image environments (sdk/python/typings).
 */
export const CLIENT_MYPYPATH = [sdkPythonPath, path.join(sdkPythonPath, 'typings')].join(path.delimiter);

/**
 * Writes the pyrightconfig.json of the same project into `dir`: strict, Python 3.10 (the oldest
 * the SDK and the clients support), the SDK importable from its source. pyright reports what
 * `include` names (paths in `dir` or absolute): the clients, and the SDK too when the caller adds it.
 */
export function writeClientPyrightConfig(dir: string, include: readonly string[]): void {
  // pyright ignores an absolute path in "include": each is written relative to the config's folder.
  const relative = include.map((entry) => path.relative(dir, path.resolve(dir, entry)));
  const config = {
    include: relative,
    typeCheckingMode: 'strict',
    pythonVersion: '3.10',
    extraPaths: [sdkPythonPath],
    stubPath: path.join(sdkPythonPath, 'typings'),
  };
  writeFileSync(path.join(dir, 'pyrightconfig.json'), JSON.stringify(config, null, 2));
}

/** pyright (an npm devDependency of svc) on the project in `cwd`, with the packages `interpreter` has; `--stats` prints how many source files it found. */
export function runPyright(cwd: string, interpreter: string): Promise<PythonRun> {
  return runProcess(process.execPath, [pyrightCli, '--pythonpath', interpreter, '--warnings', '--stats'], { cwd });
}

const pyrightCli = createRequire(import.meta.url).resolve('pyright/index.js');

/**
 * The interpreter of a new virtual environment with no package in it: what a project that only
 * installed svc has (the checks find the SDK on their own path), without websockets, pydantic or
 * anything else the tests' Python holds. The type checkers ask it where packages are.
 */
export function bareInterpreter(): string {
  const dir = tempDir('svc-bare-venv-');
  const made = spawnSync(python, ['-m', 'venv', '--without-pip', dir], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`python -m venv failed: ${made.stderr}`);
  return path.join(dir, 'bin', 'python');
}

export interface PythonRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `script` in a new Python process, without blocking the event loop (an
 * in-process platform must keep answering). The environment is only what the
 * test gives, plus PATH: never the developer's ~/.svc or SVC_TOKEN.
 */
export function runPython(script: string, options: { cwd: string; env?: Record<string, string>; python?: string }): Promise<PythonRun> {
  return runProcess(options.python ?? python, ['-c', script], options);
}

function runProcess(command: string, args: readonly string[], options: { cwd: string; env?: Record<string, string> }): Promise<PythonRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...passThrough(), HOME: tempDir('svc-home-'), PYTHONDONTWRITEBYTECODE: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** What finding Python itself needs (pyenv shims read these). */
function passThrough(): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ['PATH', 'PYENV_ROOT', 'PYENV_VERSION', 'LANG', 'LC_ALL']) {
    const value = process.env[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/** The JSON the script printed last; fails with its stderr when it exited non-zero. */
export function printed(run: PythonRun): any {
  if (run.code !== 0) throw new Error(`python exited ${run.code}:\n${run.stderr}\n${run.stdout}`);
  const lines = run.stdout.trim().split('\n');
  return JSON.parse(lines.at(-1)!);
}

/** Writes an exporter's files under `dir` (what the CLI does, minus the checks). */
export function writeFiles(dir: string, generated: ExportedFiles): string {
  for (const file of generated.files) {
    const target = path.join(dir, ...file.path.split('/'));
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, file.contents);
  }
  return dir;
}

/** PYTHONPATH with the generated clients' folder and the SDK. */
export function pythonPath(out: string): string {
  return [out, sdkPythonPath].join(path.delimiter);
}

/**
 * A Python that can `import websockets.sync.client`: python3 when it can, else
 * the runtime layer of an image svc built (it always installs websockets).
 */
export function pythonWithWebsockets(): string | null {
  const works = (candidate: string) => spawnSync(candidate, ['-c', 'import websockets.sync.client'], { stdio: 'ignore' }).status === 0;
  if (works(python)) return python;
  let images: string[] = [];
  try {
    images = readdirSync(path.join(testCacheDir, 'images'));
  } catch {
    return null;
  }
  // Hidden entries are other processes' builds in progress: renamed away any moment.
  for (const image of images.filter((name) => !name.startsWith('.')).sort()) {
    const candidate = path.join(testCacheDir, 'images', image, 'bin', 'python');
    if (works(candidate)) return candidate;
  }
  return null;
}
