/**
 * `npm run bench:checkpoint`: how long a new container of bench/apps/slow_start.py
 * (on_start sleeps 2 s, 2 workers) takes from the scale-up request to healthy —
 * every worker answering its health route and registered — with
 * checkpoint_enabled (forked from the warmed template) and without (a fresh
 * process: interpreter, imports, on_start in each worker). Several runs,
 * medians. BENCH_RUNS sets the number of runs (default 7).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/load.js';
import { loadManifest } from '../core/infra/manifest-loader/load.js';
import { packageRoot } from '../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform } from '../core/platform/platform.js';

const runs = Number(process.env.BENCH_RUNS ?? 7);

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `${median.toFixed(0)} ms (min ${sorted[0]!.toFixed(0)}, max ${sorted.at(-1)!.toFixed(0)})`;
}

const config = loadConfig({ flags: { port: 0, dataDir: mkdtempSync(path.join(os.tmpdir(), 'svc-bench-')) } });
const manifest = await loadManifest({ target: path.join(packageRoot, 'bench', 'apps', 'slow_start.py'), python: config.python });
const platform = await startPlatform({ config });
try {
  const t0 = performance.now();
  // The first container of each: the warm one builds its template (imports, on_start) first.
  const deployment = await platform.deployments.deploy({
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage: 'preview',
    principal: null,
  });
  const deployMs = performance.now() - t0;
  const results: string[] = [];
  for (const name of ['warm', 'cold']) {
    const unit = deployment.units.find((key) => key.endsWith(`/${name}`))!;
    const samples: number[] = [];
    const origins = new Set<string>();
    const [first] = platform.driver.status(unit);
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      await platform.driver.scale(unit, 2);
      samples.push(performance.now() - started);
      for (const container of platform.driver.status(unit)) if (container.id !== first!.id) origins.add(container.startedFrom);
      await platform.driver.scale(unit, 1); // stops the newest: the first container stays
    }
    results.push(`| ${name} | ${name === 'warm' ? 'True' : 'False'} | ${[...origins].join(', ')} | ${summary(samples)} |`);
  }
  console.log(
    `svc bench:checkpoint — ${os.cpus().length} cores, Node ${process.version}, ${runs} runs each; on_start sleeps 2 s, 2 workers per container\n`,
  );
  console.log('| workload | checkpoint_enabled | new containers start from | scale-up request → healthy, median |');
  console.log('|---|---|---|---|');
  for (const row of results) console.log(row);
  console.log(
    `\nfirst deploy (both workloads' first containers, the warm one's template included, image cached): ${deployMs.toFixed(0)} ms`,
  );
} finally {
  await platform.close();
}
