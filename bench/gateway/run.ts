/**
 * `npm run bench`: the gateway's cost, measured side by side in one run on
 * this machine (see docs/benchmarks.md). It serves bench/apps/hello.py on the
 * embedded platform, then:
 *
 * - drives its `hello` endpoint with wrk directly (the same runtime code and
 *   uvicorn settings on a TCP port: direct_server.py), through a minimal Node
 *   proxy (bench/floor-proxy.ts) and through the gateway: throughput at 64
 *   connections, p50/p99 latency at 1 and 16;
 * - checks 429 precision on `busy` (capacity C, max_pending_tasks P): bursts
 *   of 3 × (C + P) simultaneous requests, each admitting exactly C + P;
 * - measures goodput on `busy` under twice its saturated rate.
 *
 * Compare ratios, not absolute numbers: machines differ and this one is shared.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../../config/load.js';
import { createVenvBuilder } from '../../core/images/venv-builder.js';
import { loadManifest } from '../../core/manifest/load.js';
import { packageRoot, sdkPythonPath } from '../../core/paths.js';
import { DEFAULT_WORKSPACE, startPlatform } from '../../core/platform.js';
import { startFloorProxy } from '../floor-proxy.js';
import type { BurstResult, OverloadResult } from './clients.js';
import { measure, median, ratios, series, spread, type Measurement } from './measure.js';
import { nodeGenerator, wrk, wrkAvailable, type Generator, type RunFigures } from './wrk.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const durationMs = Number(process.env.BENCH_DURATION_MS ?? 2000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_MS = 1000;
const LOADS = [1, 16, 64];

async function clients<T>(mode: 'burst' | 'overload', spec: object): Promise<T> {
  const { stdout } = await run(process.execPath, [path.join(here, 'clients.js'), mode, JSON.stringify(spec)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as T;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

async function waitForOk(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`direct_server.py exited with ${child.exitCode}`);
    const ok = await fetch(url).then((response) => response.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} did not answer`);
}

const generator: Generator = wrkAvailable() ? wrk : nodeGenerator();
if (generator !== wrk) {
  console.error('wrk is not installed: falling back to bench/load.ts (Node; slower, it competes for the same cores).');
  console.error('Install it for the real figures: sudo apt-get install -y wrk   (macOS: brew install wrk)');
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
const config = loadConfig({ flags: { port: 0, dataDir } });
const manifest = await loadManifest({ target: path.join(packageRoot, 'bench', 'apps', 'hello.py'), python: config.python });
const platform = await startPlatform({ config });
let direct: ChildProcess | undefined;
try {
  const request = { spec: manifest.spec, source: { root: manifest.root, entry: manifest.spec.entry }, workspace: DEFAULT_WORKSPACE, stage: 'preview' as const, principal: null };
  await platform.deployments.deploy(request); // builds or finds the image
  const t0 = performance.now();
  const deployment = await platform.deployments.deploy(request); // replaces it: containers start from scratch
  const deployMs = performance.now() - t0;

  const urlOf = (name: string) => deployment.workloads.find((w) => w.name === name)!.url!;
  const [instance] = platform.registry.instances(deployment.units.find((u) => u.endsWith('/hello'))!);
  if (!instance || instance.address.kind !== 'unix') throw new Error('no hello container');

  // Direct: the same workload served by the same runtime code, on TCP (wrk cannot reach a Unix socket).
  const workload = manifest.spec.workloads.find((w) => w.name === 'hello')!;
  const image = await createVenvBuilder({ cacheDir: config.cacheDir, python: config.python }).build(workload.image, () => {});
  const port = await freePort();
  direct = spawn(image.pythonPath, [path.join(packageRoot, 'bench', 'gateway', 'direct_server.py'), manifest.root, manifest.spec.entry, 'hello', String(port)], {
    cwd: manifest.root,
    env: { ...process.env, PYTHONPATH: sdkPythonPath, PYTHONDONTWRITEBYTECODE: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const floor = await startFloorProxy(instance.address.socketPath, instance.capacity);
  const paths = [
    { name: 'direct', url: `http://127.0.0.1:${port}/hello?name=bench` },
    { name: 'floor', url: `${floor.url}/hello?name=bench` },
    { name: 'gateway', url: `${urlOf('hello')}?name=bench` },
  ];
  let measurement: Measurement;
  let transport: { unix: RunFigures; tcp: RunFigures } | undefined;
  try {
    await waitForOk(paths[0]!.url, direct);
    measurement = await measure(generator, paths, LOADS, rounds, durationMs, WARMUP_MS);
    // What the direct figure's TCP costs against the Unix socket the gateway uses (same Node client, one connection).
    transport = {
      unix: await nodeGenerator(instance.address.socketPath).drive('http://localhost/hello?name=bench', 1, 2000, 500),
      tcp: await nodeGenerator().drive(paths[0]!.url, 1, 2000, 500),
    };
  } finally {
    await floor.close();
  }

  const busy = deployment.workloads.find((w) => w.name === 'busy')!;
  const busySpec = manifest.spec.workloads.find((w) => w.name === 'busy')!.scaling;
  const capacity = busySpec.workers * busySpec.concurrency;
  const bound = capacity + busySpec.maxPendingTasks;
  // A request first, so that the bursts meet a running container (the bound at zero is max_pending_tasks alone).
  await fetch(`${busy.url}?seconds=0`).then((response) => response.arrayBuffer());
  const bursts = await clients<BurstResult>('burst', { url: `${busy.url}?seconds=0.4`, requests: 3 * bound, trials: 8 });
  const overload = await clients<OverloadResult>('overload', { url: `${busy.url}?seconds=0.02`, capacity, durationMs: 5000 });

  const rps = (f: RunFigures) => f.rps;
  const p50 = (f: RunFigures) => f.p50us;
  const p99 = (f: RunFigures) => f.p99us;
  console.log(`svc bench — ${os.cpus().length} cores, Node ${process.version}, ${generator.name} (1 thread); ${rounds} rounds of ${durationMs} ms per path and load, order rotated each round`);
  console.log('GET /hello of bench/apps/hello.py (concurrency 16); direct = the same app and uvicorn settings on TCP');
  console.log('Cells: median over the rounds; "vs direct": median of the per-round ratios (min–max)\n');
  console.log('| load | path | req/s | vs direct | p50 µs | p99 µs | errors | proxy CPU µs/req |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const connections of LOADS) {
    for (const { name } of paths) {
      const errors = series(measurement, name, connections, (f) => f.errors).reduce((sum, n) => sum + n, 0);
      const cpu = name === 'direct' ? '–' : median(series(measurement, name, connections, (f) => f.cpuUsPerRequest)).toFixed(0);
      const cells = [median(series(measurement, name, connections, rps)).toFixed(0), spread(ratios(measurement, name, 'direct', connections, rps), 2), median(series(measurement, name, connections, p50)).toFixed(0), median(series(measurement, name, connections, p99)).toFixed(0), errors, cpu];
      console.log(`| c=${connections} | ${name} | ${cells.join(' | ')} |`);
    }
  }
  const added = (name: string) => series(measurement, name, 1, p50).map((value, index) => value - series(measurement, 'direct', 1, p50)[index]!);
  console.log('');
  console.log(`throughput at c=64: gateway ${spread(ratios(measurement, 'gateway', 'direct', 64, rps), 2)} × direct (goal ≥ 0.70), floor ${spread(ratios(measurement, 'floor', 'direct', 64, rps), 2)}; gateway/floor ${spread(ratios(measurement, 'gateway', 'floor', 64, rps), 2)}`);
  console.log(`added p50 at c=1: gateway +${spread(added('gateway'), 0)} µs (goal ≤ 100), floor +${spread(added('floor'), 0)} µs`);
  console.log(`proxy CPU per request (this process, user + system; the machine's noise barely touches it): gateway ${[1, 16, 64].map((c) => `c=${c} ${spread(series(measurement, 'gateway', c, (f) => f.cpuUsPerRequest), 0)}`).join(', ')} µs; floor ${[1, 16, 64].map((c) => `c=${c} ${spread(series(measurement, 'floor', c, (f) => f.cpuUsPerRequest), 0)}`).join(', ')} µs`);
  console.log(`p99 vs direct: c=1 gateway ${spread(ratios(measurement, 'gateway', 'direct', 1, p99), 2)}, floor ${spread(ratios(measurement, 'floor', 'direct', 1, p99), 2)}; c=16 gateway ${spread(ratios(measurement, 'gateway', 'direct', 16, p99), 2)}, floor ${spread(ratios(measurement, 'floor', 'direct', 16, p99), 2)}`);
  if (transport) {
    console.log(`direct over TCP vs the worker's Unix socket (bench/load.ts, c=1): p50 ${transport.tcp.p50us} vs ${transport.unix.p50us} µs, ${transport.tcp.rps} vs ${transport.unix.rps} req/s`);
  }
  const conclusive = bursts.trials.filter((trial) => trial.conclusive);
  const admitted = bursts.trials.map((trial) => `${trial.counts['200'] ?? 0}${trial.conclusive ? '' : '*'}`);
  const exact = conclusive.filter((trial) => trial.counts['200'] === bound && trial.counts['429'] === 2 * bound).length;
  const others = bursts.trials.map((trial) => Object.entries(trial.counts).filter(([status]) => status !== '200' && status !== '429').map(([status, n]) => `${n}×${status}`).join(' ')).filter(Boolean);
  console.log('');
  console.log(`429 precision (busy: capacity ${capacity}, max_pending_tasks ${busySpec.maxPendingTasks}; bursts of ${3 * bound} simultaneous requests): admitted ${admitted.join(', ')} → exactly ${bound} (the rest 429) in ${exact}/${conclusive.length} conclusive trials${conclusive.length < bursts.trials.length ? ' (* = a request finished before the whole burst was read: not judged)' : ''}; 429 answered in p50 ${bursts.refusedP50us} µs, p99 ${bursts.refusedP99us} µs${others.length ? `; other answers: ${others.join('; ')}` : ''}`);
  console.log(`goodput under 2× overload (busy, 20 ms per request, 5 s open loop): saturated ${overload.saturatedRps} req/s, offered ${overload.offeredRps} req/s → ${overload.goodputRps} req/s of 200 (${(overload.goodputRps / overload.saturatedRps).toFixed(2)} of saturated), ${overload.refused} × 429, ${overload.serverErrors} × 5xx, ${overload.failures} failed`);
  console.log(`\nredeploy of the bench app (its containers started and healthy, image cached): ${deployMs.toFixed(0)} ms`);
} finally {
  direct?.kill('SIGTERM');
  await platform.close();
  rmSync(dataDir, { recursive: true, force: true });
}
