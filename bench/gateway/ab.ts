/**
 * Before/after for gateway changes: this build's gateway and another build's
 * (a checkout of an older commit, built with `npx tsc`), side by side in one
 * process over the same container, with the floor proxy, measured in rotated
 * rounds like `npm run bench`, plus the CPU this process spends per request
 * on each — the figure the machine's noise touches least.
 *
 *   git archive <commit> | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/ && (cd /tmp/before && npx tsc)
 *   node dist/bench/gateway/ab.js /tmp/before/dist        # BENCH_ROUNDS=7 BENCH_DURATION_MS=2000
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config/load.js';
import { loadManifest } from '../../core/infra/manifest-loader/load.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform } from '../../core/platform/platform.js';
import { createPluginHost } from '../../core/infra/plugin/host.js';
import type { ServiceRegistry } from '../../core/infra/registry/types.js';
import type { RouteEntry } from '../../core/traffic/gateway/types.js';
import { startFloorProxy } from '../floor-proxy.js';
import { measure, median, ratios, series, type Path } from './measure.js';
import { wrk, wrkAvailable } from './wrk.js';

const other = process.argv[2];
if (!other || !wrkAvailable()) {
  console.error('usage: node dist/bench/gateway/ab.js <dist folder of the other build>   (needs wrk: apt-get install -y wrk)');
  process.exit(2);
}
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const durationMs = Number(process.env.BENCH_DURATION_MS ?? 2000);
const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The parts of another build's gateway this comparison needs (older builds' createGateway returns a Koa app). */
interface GatewayBuild {
  RouteTable: new () => { add(entries: RouteEntry[]): unknown };
  UpstreamPools: new (registry: ServiceRegistry) => object;
  Admission: new (registry: ServiceRegistry) => object;
  createGateway(options: object): { callback?: () => http.RequestListener; handleRequest?: http.RequestListener };
}

/** A gateway of the build in `dist`, on its own port: its own route table, admission and pools over the shared registry. */
async function gatewayOf(dist: string, registry: ServiceRegistry, entry: RouteEntry): Promise<string> {
  const load = (file: string) => import(path.join(dist, 'core/traffic/gateway', file)) as Promise<Partial<GatewayBuild>>;
  const build = {
    ...(await load('route-table.js')),
    ...(await load('proxy.js')),
    ...(await load('admission.js')),
    ...(await load('app.js')),
  } as GatewayBuild;
  const routes = new build.RouteTable();
  routes.add([entry]);
  const gateway = build.createGateway({
    routes,
    upstreams: new build.UpstreamPools(registry),
    admission: new build.Admission(registry),
    plugins: createPluginHost([]),
    report: (error: unknown) => console.error(error),
  });
  const listener = typeof gateway.callback === 'function' ? gateway.callback() : gateway.handleRequest!;
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${entry.prefix}/hello?name=bench`;
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-ab-'));
const config = loadConfig({ flags: { port: 0, dataDir } });
const manifest = await loadManifest({ target: path.join(packageRoot, 'bench', 'apps', 'hello.py'), python: config.python });
const platform = await startPlatform({ config });
try {
  const deployment = await platform.deployments.deploy({
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage: 'preview',
    principal: null,
  });
  const unit = deployment.units.find((u) => u.endsWith('/hello'))!;
  const prefix = new URL(deployment.workloads.find((w) => w.name === 'hello')!.url!).pathname.replace(/\/hello$/, '');
  const entry: RouteEntry = {
    ref: { workspace: DEFAULT_WORKSPACE, app: manifest.spec.name, stage: 'preview' },
    workload: manifest.spec.workloads.find((w) => w.name === 'hello')!,
    unit,
    prefix,
  };
  const [instance] = platform.registry.instances(unit);
  if (!instance || instance.address.kind !== 'unix') throw new Error('no hello container');
  const floor = await startFloorProxy(instance.address.socketPath, instance.capacity);
  const paths: Path[] = [
    { name: 'before', url: await gatewayOf(path.resolve(other), platform.registry, entry) },
    { name: 'after', url: await gatewayOf(here, platform.registry, entry) },
    { name: 'floor', url: `${floor.url}/hello?name=bench` },
  ];
  const result = await measure(wrk, paths, [1, 16, 64], rounds, durationMs, 1000);
  await floor.close();
  console.log(`gateway before (${other}) and after (this build), ${rounds} rotated rounds of ${durationMs} ms; medians over the rounds\n`);
  console.log(
    '| load | after/before req/s | after/floor | before/floor | p50 µs before → after (floor) | CPU µs/req before → after (floor) |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const c of [1, 16, 64]) {
    const m = (name: string, pick: (f: { p50us: number; cpuUsPerRequest: number }) => number) =>
      median(series(result, name, c, pick)).toFixed(0);
    const r = (a: string, b: string) => median(ratios(result, a, b, c, (f) => f.rps)).toFixed(2);
    console.log(
      `| c=${c} | ${r('after', 'before')} | ${r('after', 'floor')} | ${r('before', 'floor')} | ${m('before', (f) => f.p50us)} → ${m('after', (f) => f.p50us)} (${m('floor', (f) => f.p50us)}) | ${m('before', (f) => f.cpuUsPerRequest)} → ${m('after', (f) => f.cpuUsPerRequest)} (${m('floor', (f) => f.cpuUsPerRequest)}) |`,
    );
  }
} finally {
  await platform.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}
