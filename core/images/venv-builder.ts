import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../errors.js';
import { runtimeRequirementsFile } from '../paths.js';
import type { ImageSpec } from '../workload/types.js';
import { spawnGroup } from '../processes/group.js';
import { findPython } from './find-python.js';
import type { BuildLog, BuiltImage, ImageBuilder } from './types.js';

/** Bump when the layout of a built venv changes, so old caches are not reused. */
const BUILDER_VERSION = 1;
const MARKER = 'svc-image.json';

export interface VenvBuilderOptions {
  /** Built environments live in `<cacheDir>/images/<key>`; shared by every data dir. */
  readonly cacheDir: string;
  /** The default interpreter (SVC_PYTHON), used when `pythonX.Y` is not on PATH. */
  readonly python: string;
}

/**
 * The embedded image builder: one virtual environment per image, holding the
 * runtime's requirements and the image's packages. pip runs with this
 * process's environment, so pip's own settings (PIP_INDEX_URL, PIP_RETRIES…) apply.
 */
export function createVenvBuilder(options: VenvBuilderOptions): ImageBuilder {
  const inFlight = new Map<string, Promise<BuiltImage>>();
  const root = path.join(options.cacheDir, 'images');

  async function build(spec: ImageSpec, log: BuildLog): Promise<BuiltImage> {
    const requirements = await readRuntimeRequirements();
    const key = imageKey(spec, requirements);
    const dir = path.join(root, key);
    const pythonPath = path.join(dir, 'bin', 'python');
    // bin/python links to the interpreter it was made from: if that is gone, build again.
    if (existsSync(path.join(dir, MARKER)) && existsSync(pythonPath)) {
      return { key, imageId: spec.id, pythonPath, path: dir, cached: true };
    }
    await rm(dir, { recursive: true, force: true });
    const tmp = path.join(root, `.${key}.${process.pid}.${randomBytes(4).toString('hex')}`);
    try {
      await mkdir(root, { recursive: true });
      await removeAbandonedBuilds(root);
      const basePython = await findPython(spec.pythonVersion, options.python);
      log(`creating a Python ${spec.pythonVersion} environment`);
      await runLogged(basePython, ['-m', 'venv', tmp], log);
      const packages = [...requirements, ...spec.pythonPackages];
      log(`installing ${packages.join(', ')}`);
      await runLogged(path.join(tmp, 'bin', 'python'), ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', ...packages], log);
      await writeFile(path.join(tmp, MARKER), JSON.stringify({ key, spec, requirements, builderVersion: BUILDER_VERSION }, null, 2));
      await moveIntoPlace(tmp, dir);
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      if (error instanceof SvcError) throw error;
      throw new SvcError('image_build_failed', `building image ${spec.id} failed: ${(error as Error).message}`, { cause: error });
    }
    return { key, imageId: spec.id, pythonPath, path: dir, cached: false };
  }

  return {
    name: 'venv',
    build(spec, log) {
      // Two workloads sharing an image must not build it twice at once.
      const key = JSON.stringify([spec.pythonVersion, spec.pythonPackages]);
      let pending = inFlight.get(key);
      if (!pending) {
        pending = build(spec, log).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
  };
}

async function readRuntimeRequirements(): Promise<string[]> {
  const text = await readFile(runtimeRequirementsFile, 'utf8');
  return text.split('\n').map((line) => line.replace(/#.*/, '').trim()).filter(Boolean);
}

function imageKey(spec: ImageSpec, requirements: readonly string[]): string {
  const canonical = JSON.stringify({ v: BUILDER_VERSION, python: spec.pythonVersion, packages: spec.pythonPackages, requirements });
  return `venv-${createHash('sha256').update(canonical).digest('hex').slice(0, 20)}`;
}

/** Another process may have finished the same build first: then theirs wins and ours is dropped. */
async function moveIntoPlace(tmp: string, dir: string): Promise<void> {
  try {
    await rename(tmp, dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if ((code === 'ENOTEMPTY' || code === 'EEXIST') && existsSync(path.join(dir, MARKER))) {
      await rm(tmp, { recursive: true, force: true });
      return;
    }
    throw error;
  }
}

/** Half-built environments of svc processes that died mid-build (their pid is in the name). */
async function removeAbandonedBuilds(root: string): Promise<void> {
  for (const entry of await readdir(root)) {
    const pid = Number(/^\.venv-[0-9a-f]+\.(\d+)\./.exec(entry)?.[1]);
    if (pid && pid !== process.pid && !isAlive(pid)) await rm(path.join(root, entry), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs a build step in its own process group, passing each output line to
 * the log; a failure carries the last lines. The group matters: pip runs
 * under `python -m venv` / ensurepip as grandchildren, and all of them must
 * die with svc (Ctrl-C or SIGTERM during a build).
 */
async function runLogged(command: string, args: readonly string[], log: BuildLog): Promise<void> {
  const tail: string[] = [];
  const group = spawnGroup({
    command,
    args,
    cwd: process.cwd(),
    env: process.env,
    onLine: (_stream, line) => {
      if (!line.trim()) return;
      tail.push(line);
      if (tail.length > 20) tail.shift();
      log(line);
    },
  });
  // Nothing async runs during 'exit': kill the whole group at once.
  const killOnExit = () => group.killNow();
  process.on('exit', killOnExit);
  try {
    const { code, signal } = await group.exited;
    if (code === 0) return;
    throw new SvcError('image_build_failed', `${path.basename(command)} ${args.slice(0, 3).join(' ')} ${signal ? `was stopped by ${signal}` : `exited with code ${code}`}:\n${tail.join('\n')}`, {
      hint: 'Check the package names and versions in Image.add_python_packages([...]) and that pip can reach its index.',
    });
  } finally {
    process.off('exit', killOnExit);
  }
}
