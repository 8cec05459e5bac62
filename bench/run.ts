/**
 * `npm run bench`: the gateway's cost, measured side by side in one run on
 * this machine. It serves bench/apps/hello.py on the embedded platform,
 * then drives its public `hello` endpoint directly over the container's Unix
 * socket, through a minimal Node proxy (the floor any Node proxy pays on this
 * machine) and through the gateway, at 1 and 16 connections, and times a
 * redeploy. Compare ratios, not absolute numbers: machines differ.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../config/load.js';
import { loadManifest } from '../core/manifest/load.js';
import { packageRoot } from '../core/paths.js';
import { DEFAULT_WORKSPACE, startPlatform } from '../core/platform.js';
import { startFloorProxy } from './floor-proxy.js';
import type { LoadResult, LoadSpec } from './load.js';

const run = promisify(execFile);
const loadScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'load.js');
const durationMs = Number(process.env.BENCH_DURATION_MS ?? 3000);

async function drive(spec: Omit<LoadSpec, 'durationMs' | 'warmupMs'>): Promise<LoadResult> {
  const { stdout } = await run(process.execPath, [loadScript, JSON.stringify({ ...spec, durationMs, warmupMs: 1000 })]);
  return JSON.parse(stdout) as LoadResult;
}

const config = loadConfig({ flags: { port: 0, dataDir: mkdtempSync(path.join(os.tmpdir(), 'svc-bench-')) } });
const manifest = await loadManifest({ target: path.join(packageRoot, 'bench', 'apps', 'hello.py'), python: config.python });
const platform = await startPlatform({ config });
try {
  const request = { spec: manifest.spec, source: { root: manifest.root, entry: manifest.spec.entry }, workspace: DEFAULT_WORKSPACE, stage: 'preview' as const, principal: null };
  await platform.deployments.deploy(request); // builds or finds the image
  const t0 = performance.now();
  const deployment = await platform.deployments.deploy(request); // replaces it: containers start from scratch
  const deployMs = performance.now() - t0;

  const hello = deployment.workloads.find((w) => w.name === 'hello')!;
  const [instance] = platform.registry.instances(deployment.units.find((u) => u.endsWith('/hello'))!);
  if (!instance || instance.address.kind !== 'unix') throw new Error('no hello container');
  const gatewayUrl = `${hello.url}?name=bench`;
  const directUrl = 'http://localhost/hello?name=bench';

  const floor = await startFloorProxy(instance.address.socketPath, instance.capacity);
  const rows: string[] = [];
  try {
    for (const connections of [1, 16]) {
      const direct = await drive({ url: directUrl, socketPath: instance.address.socketPath, connections });
      const bare = await drive({ url: `${floor.url}/hello?name=bench`, socketPath: null, connections });
      const gateway = await drive({ url: gatewayUrl, socketPath: null, connections });
      for (const [name, result] of [['direct to the container', direct], ['minimal Node proxy (floor)', bare], ['svc gateway', gateway]] as const) {
        rows.push(`| c=${connections} | ${name} | ${result.rps} | ${(result.rps / direct.rps).toFixed(2)} | ${result.p50us} | ${result.p99us} | ${result.errors} |`);
      }
    }
  } finally {
    await floor.close();
  }
  console.log(`svc bench — ${os.cpus().length} cores, Node ${process.version}, ${durationMs} ms per run after 1 s warm-up, GET /hello of bench/apps/hello.py (concurrency 16)\n`);
  console.log('| load | path | req/s | vs direct | p50 µs | p99 µs | errors |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`\nredeploy of the bench app (its container started and healthy, image cached): ${deployMs.toFixed(0)} ms`);
} finally {
  await platform.close();
}
