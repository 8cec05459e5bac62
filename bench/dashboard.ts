/**
 * `npm run bench:dashboard`: how long the dashboard's pages take to answer
 * with BENCH_APPS deployed apps (default 100) in the workspace, each the
 * first endpoint of bench/apps/hello.py, its container forked from a warm template. Each page is
 * asked BENCH_RUNS times (default 30) over one keep-alive connection, signed
 * in with a real session; the figure is the time to the whole answer on
 * loopback (server time, in effect), median and 95th percentile, against
 * the 100 ms a page may take.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/load.js';
import { loadManifest } from '../core/infra/manifest-loader/load.js';
import { packageRoot } from '../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform } from '../core/platform/platform.js';

const apps = Number(process.env.BENCH_APPS ?? 100);
const runs = Number(process.env.BENCH_RUNS ?? 30);
const BUDGET_MS = 100;

const config = loadConfig({ flags: { port: 0, dataDir: mkdtempSync(path.join(os.tmpdir(), 'svc-bench-dashboard-')) } });
const manifest = await loadManifest({ target: path.join(packageRoot, 'bench', 'apps', 'hello.py'), python: config.python });
const platform = await startPlatform({ config, zygotes: true });
try {
  const started = performance.now();
  for (let i = 0; i < apps; i++) {
    // Its first workload only: one container an app.
    const name = `bench-${String(i).padStart(3, '0')}`;
    const spec = { ...manifest.spec, name, workloads: manifest.spec.workloads.slice(0, 1).map((workload) => ({ ...workload, app: name })) };
    await platform.deployments.deploy({
      spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed',
      principal: null,
    });
  }
  const deployMs = performance.now() - started;
  const { secret } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, DEFAULT_WORKSPACE);
  const tokens = await platform.controlPlane.tokens.list({ workspace: DEFAULT_WORKSPACE, subject: platform.controlPlane.owner.account.id });
  const middle = `bench-${String(Math.floor(apps / 2)).padStart(3, '0')}`;
  const pages = {
    Apps: '/dashboard',
    'one app': `/dashboard/apps/${middle}`,
    'its logs': `/dashboard/apps/${middle}/workloads/${manifest.spec.workloads[0]!.name}/logs`,
    'Settings → Tokens': '/dashboard/settings/tokens',
    'revoke confirmation': `/dashboard/settings/tokens/${tokens[0]!.id}/revoke`,
    Workspace: '/dashboard/workspace',
  };
  console.log(
    `svc bench:dashboard — ${os.cpus().length} cores, Node ${process.version}; ${apps} apps deployed in ${(deployMs / 1000).toFixed(1)} s; ${runs} requests a page\n`,
  );
  console.log('| page | median | p95 | p95 ÷ 100 ms budget |');
  console.log('|---|---|---|---|');
  for (const [name, pagePath] of Object.entries(pages)) {
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const response = await fetch(`${platform.url}${pagePath}`, { headers: { Cookie: `svc_session=${secret}` }, redirect: 'manual' });
      await response.text();
      if (response.status !== 200) throw new Error(`${pagePath} answered ${response.status}`);
      samples.push(performance.now() - t0);
    }
    samples.sort((a, b) => a - b);
    const median = samples[Math.floor(samples.length / 2)]!;
    const p95 = samples[Math.min(samples.length - 1, Math.ceil(samples.length * 0.95) - 1)]!;
    console.log(`| ${name} | ${median.toFixed(1)} ms | ${p95.toFixed(1)} ms | ${(p95 / BUDGET_MS).toFixed(2)} |`);
  }
} finally {
  await platform.close();
}
