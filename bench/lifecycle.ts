/**
 * The rest of a request's life, for `npm run bench` (issue 21's goals):
 *
 * - cold start: from a request to a workload scaled to zero until its first
 *   answer through the gateway, against spawning a bare uvicorn with the same
 *   app and Python and polling it until it answers;
 * - `svc deploy` of a copy of examples/quickstart after a code change, the
 *   real CLI against the running platform, wall clock;
 * - a warm `square.remote()` from Python against one HTTP round trip through
 *   the gateway from the same process (bench/remote_timing.py).
 *
 * Each is a few trials, interleaved where there are two sides; medians.
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadManifest } from '../core/infra/manifest-loader/load.js';
import { examplesRoot, packageRoot } from '../core/model/paths.js';
import { DEFAULT_WORKSPACE, type Platform } from '../core/platform/platform.js';
import { median } from './gateway/measure.js';
import { freePort, spawnUvicorn, status, stop, waitUntil, type PythonEnv } from './gateway/proxies.js';

const run = promisify(execFile);
const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Samples {
  readonly samplesMs: number[];
  readonly medianMs: number;
}

function samples(values: number[]): Samples {
  return { samplesMs: values.map((value) => Number(value.toFixed(1))), medianMs: Number(median(values).toFixed(1)) };
}

async function until(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export interface ColdStart {
  readonly svc: Samples;
  readonly bareUvicorn: Samples;
}

/**
 * bench/apps/cold_asgi.py serves raw_asgi's `hello` with keep_warm_seconds=0:
 * once a request is answered its container stops, so the next request meets
 * the workload at zero. Trials alternate svc and bare uvicorn.
 */
export async function coldStart(platform: Platform, python: PythonEnv, token: string, trials: number): Promise<ColdStart> {
  const manifest = await loadManifest({ target: path.join(packageRoot, 'bench', 'apps', 'cold_asgi.py'), python: platform.config.python });
  const deployment = await platform.deployments.deploy({
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage: 'preview',
    principal: null,
  });
  const unit = deployment.units[0]!;
  const url = deployment.workloads[0]!.url!;
  const headers = { authorization: `Bearer ${token}` };
  const svc: number[] = [];
  const bare: number[] = [];
  for (let trial = 0; trial <= trials; trial++) {
    await until('the cold workload to scale to zero', () => platform.driver.status(unit).length === 0, 60_000);
    const started = performance.now();
    const code = await status(url, { headers });
    if (code !== 200) throw new Error(`the cold start's first request answered ${code}`);
    // The first trial warms what a first start pays once (the image's zygote, the page cache): not counted, on both sides.
    if (trial > 0) svc.push(performance.now() - started);

    const port = await freePort();
    const spawned = performance.now();
    const child = spawnUvicorn(python, { port });
    try {
      await waitUntil('bare uvicorn', child, async () => (await status(`http://127.0.0.1:${port}/`)) === 200, 2);
      if (trial > 0) bare.push(performance.now() - spawned);
    } finally {
      await stop(child);
    }
  }
  return { svc: samples(svc), bareUvicorn: samples(bare) };
}

export interface DeployTiming {
  readonly wall: Samples;
  /** The deploy request alone, as the CLI prints it (`✓ deployed quickstart in 0.6s`: 0.1 s steps). */
  readonly request: Samples;
}

/** A temporary copy of examples/quickstart (deploys and `.remote()` change and bundle it). */
export function quickstartCopy(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-quickstart-'));
  cpSync(path.join(examplesRoot, 'quickstart'), dir, { recursive: true });
  return dir;
}

/** The CLI's environment: this platform and its owner token (cli.md: which server, which token). */
function cliEnv(platform: Platform): NodeJS.ProcessEnv {
  return { ...process.env, SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret, NO_COLOR: '1' };
}

/** `svc deploy <copy>/app.py` after a one-line change each time (a first deploy, not counted, builds or finds the image). */
export async function deployAfterChange(platform: Platform, dir: string, deploys: number): Promise<DeployTiming> {
  const file = path.join(dir, 'app.py');
  const original = readFileSync(file, 'utf8');
  const wall: number[] = [];
  const request: number[] = [];
  for (let index = 0; index <= deploys; index++) {
    writeFileSync(file, `${original}\n# bench change ${index}\n`);
    const started = performance.now();
    const { stderr } = await run(process.execPath, [cli, 'deploy', file], { env: cliEnv(platform), cwd: dir, maxBuffer: 1 << 20 });
    if (index === 0) continue;
    wall.push(performance.now() - started);
    const printed = /deployed \S+ in ([\d.]+)s/.exec(stderr);
    if (printed) request.push(Number(printed[1]) * 1000);
  }
  return { wall: samples(wall), request: samples(request) };
}

export interface RemoteTiming {
  readonly remote: Samples;
  readonly http: Samples;
  readonly calls: number;
}

/** bench/remote_timing.py in the deployed copy: warm `square.remote()` calls interleaved with GETs of `hello` through the gateway. */
export async function remoteVsHttp(platform: Platform, python: PythonEnv, dir: string, calls: number): Promise<RemoteTiming> {
  const helloUrl = `${platform.url}/default/quickstart/hello/hello?name=bench`;
  const script = path.join(packageRoot, 'bench', 'remote_timing.py');
  const child = spawn(python.python, [script, helloUrl, String(calls)], {
    cwd: dir,
    env: { ...cliEnv(platform), PYTHONPATH: python.pythonPath },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`bench/remote_timing.py exited with ${code}`);
  const figures = JSON.parse(out.trim().split('\n').at(-1)!) as { remote_ms: number[]; http_ms: number[] };
  return { remote: samples(figures.remote_ms), http: samples(figures.http_ms), calls };
}

export function removeCopy(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
