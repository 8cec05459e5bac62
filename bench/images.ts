/**
 * `npm run bench:images`: issue 30's image goals, in one run, on this machine.
 *
 * - Building an image of six packages (fastapi pydantic numpy pandas scikit-learn httpx),
 *   svc (uv) against `python -m venv` + `pip install` of the same packages, each with its
 *   download cache empty (cold) and then filled (warm). svc's runtime layer is already built
 *   (it is shared by every image), so both sides install the same six packages.
 *   svc's image is usable once its packages are installed (its bytecode compiles in the
 *   background, `imageBytecode: background`); a row beside it builds with `imageBytecode: build`.
 * - The first `.remote()` of a function whose image is new: from Python, against an in-process
 *   platform building as svc does by default (uv, bytecode in the background), then one building
 *   as svc did when the issue was filed (`imageInstaller: pip`, `imageBytecode: build`), each on a
 *   cache dir with no such image yet and both download caches empty; and uv with bytecode at
 *   build, for what the background compile buys.
 *
 * Trials alternate the two sides; medians. Prints a table and writes bench/results/images.json.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../config/load.js';
import type { BytecodeTiming } from '../core/model/image-settings.js';
import { createVenvBuilder } from '../core/infra/images/venv-builder.js';
import { packageRoot, sdkPythonPath } from '../core/model/paths.js';
import { startPlatform } from '../core/platform/platform.js';
import { median } from './gateway/measure.js';

const run = promisify(execFile);
const PACKAGES = ['fastapi', 'pydantic', 'numpy', 'pandas', 'scikit-learn', 'httpx'];
const TRIALS = Number(process.env.BENCH_IMAGE_TRIALS ?? 2);
const python = process.env.SVC_PYTHON ?? 'python3';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-images-'));
const version = (await run(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'])).stdout.trim();
const seconds = (from: number) => (performance.now() - from) / 1000;
const fresh = (name: string) => mkdtempSync(path.join(scratch, `${name}-`));

/** A cache dir holding svc's runtime layer and uv (built once here), as after any first deploy. */
async function preparedCache(): Promise<string> {
  const cacheDir = fresh('svc-cache');
  await createVenvBuilder({ cacheDir, python }).build(
    { id: 'img-layer', pythonVersion: version, pythonPackages: [], requirementsFiles: [], env: {} },
    () => {},
  );
  return cacheDir;
}

/** A cache dir sharing the prepared one's runtime layer and uv, with no image and uv's cache at `uvCache`. */
function cacheSharing(prepared: string): string {
  const cacheDir = fresh('svc-trial');
  for (const shared of ['images', 'tools']) symlinkSync(path.join(prepared, shared), path.join(cacheDir, shared));
  return cacheDir;
}

async function pipBuild(pipCache: string): Promise<number> {
  const venv = path.join(fresh('pip-venv'), 'v');
  const env = { ...process.env, PIP_CACHE_DIR: pipCache };
  const started = performance.now();
  await run(python, ['-m', 'venv', venv], { env });
  await run(path.join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', ...PACKAGES], {
    env,
    maxBuffer: 1 << 24,
  });
  const took = seconds(started);
  rmSync(venv, { recursive: true, force: true });
  return took;
}

async function svcBuild(
  prepared: string,
  uvCache: string,
  packages: readonly string[],
  bytecode: BytecodeTiming = 'background',
): Promise<{ took: number; by: string }> {
  const lines: string[] = [];
  const previous = process.env.UV_CACHE_DIR;
  process.env.UV_CACHE_DIR = uvCache;
  try {
    const started = performance.now();
    const builder = createVenvBuilder({ cacheDir: cacheSharing(prepared), python, bytecode });
    const built = await builder.build(
      { id: 'img-bench', pythonVersion: version, pythonPackages: packages, requirementsFiles: [], env: {} },
      (line) => lines.push(line),
    );
    const took = seconds(started);
    await builder.close(); // the background compile, if any, is not what is measured here
    rmSync(built.path, { recursive: true, force: true });
    return { took, by: lines.find((line) => line.startsWith('installing with '))?.replace(/^installing with /, '') ?? 'unknown' };
  } finally {
    if (previous === undefined) delete process.env.UV_CACHE_DIR;
    else process.env.UV_CACHE_DIR = previous;
  }
}

/** The six-package image built cold and warm by both, trials interleaved; a new package list each trial so nothing is cached. */
async function builds(prepared: string) {
  const figures = {
    pipCold: [] as number[],
    pipWarm: [] as number[],
    svcCold: [] as number[],
    svcWarm: [] as number[],
    svcColdBytecodeAtBuild: [] as number[],
    by: '',
  };
  for (let trial = 0; trial < TRIALS; trial++) {
    const pipCache = fresh('pip-cache');
    figures.pipCold.push(await pipBuild(pipCache));
    figures.pipWarm.push(await pipBuild(pipCache));
    const uvCache = fresh('uv-cache');
    // The same packages under another image key each time (a trailing marker pip and uv ignore is not possible): the order changes the key.
    const packages = trial % 2 === 0 ? PACKAGES : [...PACKAGES].reverse();
    const cold = await svcBuild(prepared, uvCache, packages);
    figures.svcCold.push(cold.took);
    figures.svcWarm.push((await svcBuild(prepared, uvCache, packages)).took);
    figures.svcColdBytecodeAtBuild.push((await svcBuild(prepared, fresh('uv-cache'), packages, 'build')).took);
    figures.by = cold.by;
  }
  return figures;
}

/** Seconds from `fn.remote(3)` in a new Python process to its answer, against a platform whose image cache has no such image. */
async function firstRemote(prepared: string, installer: 'auto' | 'pip', imageBytecode: BytecodeTiming): Promise<number> {
  const project = fresh('remote-app');
  writeFileSync(
    path.join(project, 'app.py'),
    [
      'import svc',
      'app = svc.App("bench-first-remote")',
      `image = svc.Image(python_version="${version}").add_python_packages(${JSON.stringify(PACKAGES)})`,
      '@app.function(image=image)',
      'def triple(x: int) -> int:',
      '    import numpy',
      '    return int(numpy.int64(x) * 3)',
      '',
    ].join('\n'),
  );
  // Both download caches empty, as for the cold build: neither side has these packages yet.
  const previous = { UV_CACHE_DIR: process.env.UV_CACHE_DIR, PIP_CACHE_DIR: process.env.PIP_CACHE_DIR };
  process.env.UV_CACHE_DIR = fresh('uv-cache');
  process.env.PIP_CACHE_DIR = fresh('pip-cache');
  const config = loadConfig({ flags: { port: 0, dataDir: fresh('data') } });
  const platform = await startPlatform({
    config: { ...config, cacheDir: cacheSharing(prepared), python, imageInstaller: installer, imageBytecode },
  });
  try {
    const started = performance.now();
    const { stdout } = await run(python, ['-c', 'import app; print(app.triple.remote(3))'], {
      cwd: project,
      env: { ...process.env, PYTHONPATH: sdkPythonPath, SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret },
      maxBuffer: 1 << 24,
    });
    if (stdout.trim() !== '9') throw new Error(`triple.remote(3) printed ${stdout}`);
    return seconds(started);
  } finally {
    await platform.close();
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

const ratio = (a: number[], b: number[]) => Number((median(a) / median(b)).toFixed(3));
const med = (values: number[]) => Number(median(values).toFixed(2));

try {
  const prepared = await preparedCache();
  const built = await builds(prepared);
  const remote = { uv: [] as number[], pip: [] as number[], uvBytecodeAtBuild: [] as number[] };
  for (let trial = 0; trial < TRIALS; trial++) {
    remote.uv.push(await firstRemote(prepared, 'auto', 'background'));
    remote.pip.push(await firstRemote(prepared, 'pip', 'build'));
    remote.uvBytecodeAtBuild.push(await firstRemote(prepared, 'auto', 'build'));
  }
  const result = {
    at: new Date().toISOString(),
    machine: `${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown cpu'}`,
    packages: PACKAGES,
    trials: TRIALS,
    builtBy: built.by,
    buildSeconds: {
      pipCold: med(built.pipCold),
      svcCold: med(built.svcCold),
      pipWarm: med(built.pipWarm),
      svcWarm: med(built.svcWarm),
      svcColdBytecodeAtBuild: med(built.svcColdBytecodeAtBuild),
    },
    samples: { ...built, remoteUv: remote.uv, remotePip: remote.pip, remoteUvBytecodeAtBuild: remote.uvBytecodeAtBuild },
    ratios: {
      buildCold: ratio(built.svcCold, built.pipCold),
      buildWarm: ratio(built.svcWarm, built.pipWarm),
      firstRemote: ratio(remote.uv, remote.pip),
    },
    firstRemoteSeconds: { uv: med(remote.uv), pip: med(remote.pip), uvBytecodeAtBuild: med(remote.uvBytecodeAtBuild) },
    goals: { buildCold: 0.15, buildWarm: 0.1, firstRemote: 0.2 },
  };
  const rows = [
    [
      'image build, caches empty',
      `${result.buildSeconds.svcCold} s`,
      `${result.buildSeconds.pipCold} s`,
      result.ratios.buildCold,
      '≤ 0.15',
    ],
    ['image build, caches warm', `${result.buildSeconds.svcWarm} s`, `${result.buildSeconds.pipWarm} s`, result.ratios.buildWarm, '≤ 0.1'],
    [
      '  … bytecode at build, cold',
      `${result.buildSeconds.svcColdBytecodeAtBuild} s`,
      `${result.buildSeconds.pipCold} s`,
      ratio(built.svcColdBytecodeAtBuild, built.pipCold),
      '',
    ],
    [
      'first .remote(), new image',
      `${result.firstRemoteSeconds.uv} s`,
      `${result.firstRemoteSeconds.pip} s`,
      result.ratios.firstRemote,
      '≤ 0.2',
    ],
    [
      '  … uv, bytecode at build',
      `${result.firstRemoteSeconds.uvBytecodeAtBuild} s`,
      `${result.firstRemoteSeconds.pip} s`,
      ratio(remote.uvBytecodeAtBuild, remote.pip),
      '',
    ],
  ];
  process.stdout.write(`images: ${PACKAGES.join(' ')} (svc built with ${built.by}; medians of ${TRIALS})\n`);
  process.stdout.write('svc: uv, bytecode in the background (its default); pip: pip with bytecode at build (svc before)\n');
  process.stdout.write(`${'figure'.padEnd(30)}${'svc'.padStart(10)}${'pip'.padStart(10)}${'ratio'.padStart(8)}  goal\n`);
  for (const [what, svc, pip, r, goal] of rows)
    process.stdout.write(
      `${String(what).padEnd(30)}${String(svc).padStart(10)}${String(pip).padStart(10)}${String(r).padStart(8)}  ${goal}\n`,
    );
  mkdirSync(path.join(packageRoot, 'bench', 'results'), { recursive: true });
  writeFileSync(path.join(packageRoot, 'bench', 'results', 'images.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
