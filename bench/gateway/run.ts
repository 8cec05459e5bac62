/**
 * `npm run bench`: issues 21's and 30's tables, measured as ratios in one
 * run on this machine (see docs/benchmarks.md). The same raw ASGI app
 * (bench/apps/raw_asgi.py) is reached:
 *
 * - direct: a bare uvicorn on TCP;
 * - through nginx, haproxy and the Node floor proxy, to a second bare
 *   uvicorn on a Unix socket;
 * - through svc as a user runs it: `svc server` and `svc deploy` (the
 *   CLI, svc-server.ts), called with the owner token (the gateway and the
 *   svc runtime); the svc runtime alone, behind nginx; and behind the floor
 *   proxy (what the gateway's own cost is judged against);
 * - through Knative's queue-proxy and OpenFaaS's of-watchdog (opt-in: when
 *   their binaries are there) to the direct uvicorn;
 *
 * the same answer without a Content-Length (`/chunked`: sent chunked, as
 * streamed answers are) directly, through svc, and through the floor in
 * front of the svc runtime (collecting it, and streaming it); and a JSON
 * endpoint (bench/apps/hello.py) through the gateway and behind nginx. wrk
 * at 1, 16 and 64 connections, rotated rounds; the CPU each proxy spends
 * per request. Then the admission checks on `busy` (429 precision, goodput
 * under overload), cold start, `svc deploy` and `.remote()`
 * (bench/lifecycle.ts), the goals, bench/results/latest.json and .png.
 *
 * BENCH_DURATION_MS, BENCH_ROUNDS; BENCH_ONLY=svc,nginx,… runs some paths
 * (and the checks named: admission, lifecycle) only; BENCH_BEFORE=<another
 * checkout, built> runs its `svc server` beside this one's (svc-before).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../../config/load.js';
import { createVenvBuilder } from '../../core/infra/images/venv-builder.js';
import { loadManifest } from '../../core/infra/manifest-loader/load.js';
import { packageRoot, sdkPythonPath } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import {
  coldStart,
  deployAfterChange,
  quickstartCopy,
  remoteVsHttp,
  removeCopy,
  type ColdStart,
  type DeployTiming,
  type RemoteTiming,
} from '../lifecycle.js';
import { chartSvg, renderPng } from './chart.js';
import type { BurstResult, OverloadResult } from './clients.js';
import { pidsCpu, processCpu, treeCpu } from './cpu.js';
import { evaluateGoals, printBeforeAfter, printGoals, unsettledRange } from './goals.js';
import { measure, type Path } from './measure.js';
import {
  freePort,
  peerBinary,
  startFloorChild,
  startHaproxy,
  startNginx,
  startOfWatchdog,
  startQueueProxy,
  startUvicorn,
  status,
  type PythonEnv,
  type Served,
} from './proxies.js';
import { commit, describe, machine, resultsDir, writeResults } from './results.js';
import { startSvcServer } from './svc-server.js';
import { cell, cellsOf, chartPanels, directOf, printTables, PATHS, type Cell, type PathName } from './table.js';
import { nodeGenerator, wrk, wrkAvailable, type Generator } from './wrk.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const durationMs = wholeNumber('BENCH_DURATION_MS', 2000);
const rounds = wholeNumber('BENCH_ROUNDS', 3);
const only = onlyNames(process.env.BENCH_ONLY);
const wanted = (name: string) => only === null || only.has(name);
const WARMUP_MS = 1000;
const LOADS = [1, 16, 64];

/** A positive whole number from the environment, or its default; anything else stops the bench saying so. */
function wholeNumber(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`${name} must be a positive whole number, got ${JSON.stringify(text)} (default ${fallback}).`);
    process.exit(2);
  }
  return value;
}

/** BENCH_ONLY's names, each a path of the table or a check; an unknown one stops the bench, naming the valid ones. */
function onlyNames(text: string | undefined): ReadonlySet<string> | null {
  if (text === undefined || text.trim() === '') return null;
  const known = [...Object.keys(PATHS), 'admission', 'lifecycle'];
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    console.error(
      `BENCH_ONLY names ${unknown.map((name) => JSON.stringify(name)).join(', ')}, which the bench does not know; choose among ${known.join(', ')}.`,
    );
    process.exit(2);
  }
  return new Set(names);
}

async function clients<T>(mode: 'burst' | 'overload', spec: object): Promise<T> {
  const { stdout } = await run(process.execPath, [path.join(here, 'clients.js'), mode, JSON.stringify(spec)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as T;
}

const generator: Generator = wrkAvailable() ? wrk : nodeGenerator();
if (generator !== wrk) {
  console.error('wrk is not installed: falling back to bench/load.ts (Node; slower, it competes for the same cores).');
  console.error('Install it for the real figures: sudo apt-get install -y wrk   (macOS: brew install wrk)');
}

// Everything started is stopped at the end, on an error and on Ctrl-C alike.
const closers: (() => Promise<void>)[] = [];
const scratch = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
let cleaned: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaned ??= (async () => {
    for (const close of closers.reverse()) await close().catch((error: unknown) => console.error(`cleanup: ${String(error)}`));
    rmSync(scratch, { recursive: true, force: true });
  })();
  return cleaned;
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => void cleanUp().then(() => process.exit(130)));
// Output piped into a reader that left (`| head`): stop everything rather than die with the children running.
process.stdout.on('error', () => void cleanUp().then(() => process.exit(1)));
function keep<T extends Served>(served: T): T {
  closers.push(() => served.close());
  return served;
}

async function deploy(platform: Platform, app: string) {
  const manifest = await loadManifest({ target: path.join(packageRoot, 'bench', 'apps', app), python: platform.config.python });
  const request = {
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage: 'preview' as const,
    principal: null,
  };
  return { manifest, request, deployment: await platform.deployments.deploy(request) };
}

try {
  const config = loadConfig({ flags: { port: 0, dataDir: path.join(scratch, 'data') } });
  const platform = await startPlatform({ config });
  closers.push(() => platform.close());
  const token = platform.ownerToken.secret;

  // The gateways measured are `svc server`s of their own; this process's platform serves the admission and lifecycle checks.
  const svc = keep(await startSvcServer(path.join(scratch, 'svc-raw'), 'raw_asgi.py'));
  const svcJson = keep(await startSvcServer(path.join(scratch, 'svc-json'), 'hello.py'));
  // Another build's svc server beside this one's (BENCH_BEFORE=<checkout with dist/ built>): before and after in one run.
  const before = process.env.BENCH_BEFORE
    ? keep(
        await startSvcServer(
          path.join(scratch, 'svc-before'),
          'raw_asgi.py',
          path.join(process.env.BENCH_BEFORE, 'dist', 'cli', 'index.js'),
        ),
      )
    : null;
  const json = await deploy(platform, 'hello.py');
  const t0 = performance.now();
  const redeployed = await platform.deployments.deploy(json.request); // replaces it: containers start from scratch
  const deployMs = performance.now() - t0;

  // The image's Python (uvicorn, uvloop, httptools) serves the bare uvicorns; raw_asgi.py imports svc.
  const rawManifest = await loadManifest({ target: path.join(packageRoot, 'bench', 'apps', 'raw_asgi.py'), python: config.python });
  const workload = rawManifest.spec.workloads.find((w) => w.name === 'hello')!;
  const image = await createVenvBuilder({ cacheDir: config.cacheDir, python: config.python }).build(workload.image, () => {});
  const python: PythonEnv = {
    python: image.pythonPath,
    pythonPath: [sdkPythonPath, path.join(packageRoot, 'bench', 'apps')].join(path.delimiter),
  };

  const directPort = await freePort();
  const direct = keep(await startUvicorn(python, { port: directPort }));
  const uds = path.join(scratch, 'uvicorn.sock');
  const behind = keep(await startUvicorn(python, { uds }));
  const directCpu = treeCpu([direct.pid]);
  const behindCpu = treeCpu([behind.pid]);

  const [nginxPort, runtimeNginxPort, jsonNginxPort, haproxyPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const nginx = keep(
    await startNginx(path.join(scratch, 'nginx'), [
      { port: nginxPort, socketPath: uds },
      { port: runtimeNginxPort, socketPath: svc.hello.socketPath },
      { port: jsonNginxPort, socketPath: svcJson.hello.socketPath },
    ]),
  );
  const haproxy = keep(await startHaproxy(path.join(scratch, 'haproxy'), { port: haproxyPort, socketPath: uds }));
  const floor = keep(await startFloorChild(uds, 256, 'collect'));
  // The floor in front of the svc runtime svc's gateway sends to, collecting answers and streaming them.
  const runtimeFloor = keep(await startFloorChild(svc.hello.socketPath, 256, 'collect'));
  const streamingFloor = wanted('floor-runtime-stream-chunked') ? keep(await startFloorChild(svc.hello.socketPath, 256, 'stream')) : null;

  const peers: Record<string, { binary: string; versionEnv: string }> = {};
  const skipped: string[] = [];
  const paths: (Path & { name: PathName })[] = [
    { name: 'direct', url: `http://127.0.0.1:${directPort}/`, proxyCpu: () => 0, appCpu: directCpu },
    { name: 'nginx', url: `http://127.0.0.1:${nginxPort}/`, proxyCpu: treeCpu([nginx.pid]), appCpu: behindCpu },
    { name: 'haproxy', url: `http://127.0.0.1:${haproxyPort}/`, proxyCpu: treeCpu([haproxy.pid]), appCpu: behindCpu },
    { name: 'floor', url: `${floor.url}/`, proxyCpu: treeCpu([floor.pid]), appCpu: behindCpu },
    {
      name: 'svc',
      url: svc.hello.url,
      headers: { authorization: `Bearer ${svc.token}` },
      proxyCpu: processCpu(svc.pid),
      appCpu: pidsCpu(svc.hello.pids),
    },
    {
      name: 'svc-runtime-nginx',
      url: `http://127.0.0.1:${runtimeNginxPort}/`,
      proxyCpu: treeCpu([nginx.pid]),
      appCpu: pidsCpu(svc.hello.pids),
    },
    { name: 'svc-json', url: `${svcJson.hello.url}?name=bench`, proxyCpu: processCpu(svcJson.pid), appCpu: pidsCpu(svcJson.hello.pids) },
    {
      name: 'svc-json-nginx',
      url: `http://127.0.0.1:${jsonNginxPort}/hello?name=bench`,
      proxyCpu: treeCpu([nginx.pid]),
      appCpu: pidsCpu(svcJson.hello.pids),
    },
    { name: 'floor-runtime', url: `${runtimeFloor.url}/`, proxyCpu: treeCpu([runtimeFloor.pid]), appCpu: pidsCpu(svc.hello.pids) },
    // The same answer without a Content-Length: raw_asgi.py's /chunked.
    { name: 'direct-chunked', url: `http://127.0.0.1:${directPort}/chunked`, proxyCpu: () => 0, appCpu: directCpu },
    {
      name: 'svc-chunked',
      url: `${svc.hello.url}/chunked`,
      headers: { authorization: `Bearer ${svc.token}` },
      proxyCpu: processCpu(svc.pid),
      appCpu: pidsCpu(svc.hello.pids),
    },
    {
      name: 'floor-runtime-chunked',
      url: `${runtimeFloor.url}/chunked`,
      proxyCpu: treeCpu([runtimeFloor.pid]),
      appCpu: pidsCpu(svc.hello.pids),
    },
    ...(streamingFloor
      ? [
          {
            name: 'floor-runtime-stream-chunked' as const,
            url: `${streamingFloor.url}/chunked`,
            proxyCpu: treeCpu([streamingFloor.pid]),
            appCpu: pidsCpu(svc.hello.pids),
          },
        ]
      : []),
  ];
  if (before) {
    for (const [name, target] of [
      ['svc-before', ''],
      ['svc-before-chunked', '/chunked'],
    ] as const) {
      paths.push({
        name,
        url: `${before.hello.url}${target}`,
        headers: { authorization: `Bearer ${before.token}` },
        proxyCpu: processCpu(before.pid),
        appCpu: pidsCpu(before.hello.pids),
      });
    }
  }
  for (const peer of [
    { name: 'queue-proxy', env: 'QUEUE_PROXY_BIN' },
    { name: 'of-watchdog', env: 'OF_WATCHDOG_BIN' },
  ] as const) {
    if (!wanted(peer.name)) continue;
    const binary = peerBinary(peer.env, peer.name);
    const given = process.env[peer.env];
    if (!binary && given) {
      skipped.push(`${peer.name}: skipped (${peer.env}=${given}: no such file; give the path of the binary you built)`);
      continue;
    }
    if (!binary) {
      skipped.push(
        `${peer.name}: skipped (opt-in: set ${peer.env}=<path to the binary> or put \`${peer.name}\` on PATH; docs/benchmarks.md says how to build it)`,
      );
      continue;
    }
    try {
      const port = await freePort();
      const started =
        peer.name === 'queue-proxy'
          ? await startQueueProxy(binary, port, directPort)
          : await startOfWatchdog(binary, path.join(scratch, 'of-watchdog'), port, directPort);
      keep(started);
      peers[peer.name] = { binary, versionEnv: `${peer.env.replace(/_BIN$/, '')}_VERSION` };
      paths.push({ name: peer.name, url: `http://127.0.0.1:${port}/`, proxyCpu: treeCpu([started.pid]), appCpu: directCpu });
    } catch (error) {
      skipped.push(`${peer.name}: skipped (${(error as Error).message})`);
    }
  }
  // Each path measured brings its direct path, the denominator of its ratios.
  const bases = new Set(paths.filter((p) => wanted(p.name)).map((p) => directOf(p.name)));
  // BENCH_BEFORE's svc goes with this build's: svc-before with svc, svc-before-chunked with svc-chunked.
  const measured = paths.filter((p) => wanted(p.name) || bases.has(p.name) || wanted(p.name.replace('-before', '')));
  for (const { name, url, headers } of measured) {
    const code = await status(url, { headers });
    if (code !== 200) throw new Error(`${name} (${url}) answered ${code} before the bench`);
  }
  const measurement = await measure(generator, measured, LOADS, rounds, durationMs, WARMUP_MS);

  let admission: { bursts: BurstResult; overload: OverloadResult; capacity: number; maxPending: number } | null = null;
  if (wanted('admission')) {
    const busy = redeployed.workloads.find((w) => w.name === 'busy')!;
    const busySpec = json.manifest.spec.workloads.find((w) => w.name === 'busy')!.scaling;
    const capacity = busySpec.workers * busySpec.concurrency;
    const bound = capacity + busySpec.maxPendingTasks;
    // A request first, so that the bursts meet a running container (the bound at zero is max_pending_tasks alone).
    await fetch(`${busy.url}?seconds=0`).then((response) => response.arrayBuffer());
    const bursts = await clients<BurstResult>('burst', { url: `${busy.url}?seconds=0.4`, requests: 3 * bound, trials: 8 });
    const overload = await clients<OverloadResult>('overload', { url: `${busy.url}?seconds=0.02`, capacity, durationMs: 5000 });
    admission = { bursts, overload, capacity, maxPending: busySpec.maxPendingTasks };
  }

  let lifecycle: { cold: ColdStart; deploy: DeployTiming; remote: RemoteTiming } | null = null;
  if (wanted('lifecycle')) {
    const cold = await coldStart(platform, python, token, 5);
    const copy = quickstartCopy();
    closers.push(async () => removeCopy(copy));
    const deployTiming = await deployAfterChange(platform, copy, 5);
    const remote = await remoteVsHttp(platform, python, copy, 200);
    lifecycle = { cold, deploy: deployTiming, remote };
  }

  const info = machine(python.python, peers);
  const at = commit();
  const date = new Date().toISOString();
  console.log(`svc bench — ${date}, ${describe(info, at)}`);
  console.log(
    `${info.nginx ?? 'nginx ?'}, ${info.haproxy ?? 'haproxy ?'}, uvicorn ${info.uvicorn ?? '?'}, ${generator.name === 'wrk' ? (info.wrk ?? 'wrk') : generator.name} (1 thread, keep-alive); ${rounds} round${rounds === 1 ? '' : 's'} of ${durationMs} ms per path and load, order rotated each round`,
  );
  console.log(
    'GET / of bench/apps/raw_asgi.py ({"ok":true}, with a Content-Length; *-chunked paths: GET /chunked, the same body sent chunked); cells: medians over the rounds; ratios: median of the per-round ratios (min–max)\n',
  );
  const cells = cellsOf(
    measurement,
    measured.map((p) => p.name),
    LOADS,
  );
  printTables(cells, LOADS);
  if (before)
    printBeforeAfter(
      measurement,
      measured.map((p) => p.name),
      process.env.BENCH_BEFORE!,
    );
  for (const line of skipped) console.log(line);
  printJsonOverhead(cells);

  const goals = evaluateGoals(
    measurement,
    measured.map((p) => p.name),
    lifecycle,
  );
  console.log('');
  printGoals(goals);

  console.log('');
  if (admission) printAdmission(admission);
  if (lifecycle) {
    const { cold, deploy: d, remote } = lifecycle;
    console.log(
      `cold start (bench/apps/cold_asgi.py at zero → first answer through the gateway, ${cold.svc.samplesMs.length} trials): ${cold.svc.medianMs} ms (${cold.svc.samplesMs.join(', ')}); bare uvicorn spawn → first answer: ${cold.bareUvicorn.medianMs} ms (${cold.bareUvicorn.samplesMs.join(', ')})`,
    );
    console.log(
      `svc deploy of examples/quickstart after a change (the CLI, wall): ${d.wall.medianMs} ms (${d.wall.samplesMs.join(', ')}), of which the deploy request ${d.request.medianMs} ms (as the CLI prints it, 0.1 s steps)`,
    );
    console.log(
      `warm square.remote(): ${remote.remote.medianMs} ms; GET through the gateway (same process, kept alive): ${remote.http.medianMs} ms (medians of ${remote.calls}, interleaved)`,
    );
  }
  console.log(`redeploy of bench/apps/hello.py (its containers started and healthy, image cached): ${deployMs.toFixed(0)} ms`);

  // A partial run (BENCH_ONLY) must not replace the committed figures of a whole one.
  const name = only ? 'partial' : 'latest';
  const file = writeResults(name, {
    date,
    machine: info,
    commit: at,
    generator: generator.name,
    rounds,
    durationMs,
    loads: LOADS,
    paths: Object.fromEntries(measured.map((p) => [p.name, PATHS[p.name]])),
    cells,
    goals,
    skipped,
    admission,
    lifecycle,
    redeployMs: Math.round(deployMs),
  });
  const title = `svc bench ${date.slice(0, 16).replace('T', ' ')} UTC · commit ${at.sha}${at.dirty ? ' (dirty)' : ''}`;
  const subtitle = `${info.cores} cores (${info.cpu}), Node ${info.node}, ${info.python ?? ''}, uvicorn ${info.uvicorn ?? '?'}, ${info.nginx ?? ''}, ${info.haproxy ?? ''}; ${rounds} round${rounds === 1 ? '' : 's'} of ${durationMs / 1000} s`;
  const png = path.join(resultsDir, `${name}.png`);
  const judged = goals
    .filter((goal) => goal.value !== null)
    .map(
      (goal) =>
        `${goal.met === null ? '?' : goal.met ? '✓' : '✗'} ${goal.name}: ${goal.unsettled ? `${unsettledRange(goal.unsettled)} (rounds disagree)` : goal.value} (goal ${goal.goal})`,
    );
  const rendered = await renderPng(
    chartSvg(title, subtitle, chartPanels(cells), judged.length ? ['Goals (issues 21 and 30):', ...judged] : []),
    png,
  );
  console.log(
    `\nwrote ${path.relative(process.cwd(), file)}${rendered ? ` and ${path.relative(process.cwd(), png)}` : ' (no chart: no Chromium at CHROMIUM_BIN or /usr/bin/chromium)'}`,
  );
} finally {
  await cleanUp();
}

/** What the runtime's JSON endpoint path costs against the raw ASGI app, both behind nginx (and through the gateway). */
function printJsonOverhead(cells: readonly Cell[]): void {
  const [json, rawApp, jsonSvc, rawSvc] = ['svc-json-nginx', 'svc-runtime-nginx', 'svc-json', 'svc'].map((name) => cell(cells, name, 64));
  if (!json || !rawApp) return;
  const app = (c: Cell) => (c.appCpuUsPerRequest === null ? '?' : c.appCpuUsPerRequest.toFixed(1));
  console.log(
    `\nJSON endpoint (hello.py, concurrency 16) vs the raw ASGI app on the svc runtime, behind nginx at c=64: ${json.rps} vs ${rawApp.rps} req/s (${(json.rps / rawApp.rps).toFixed(2)}×), container CPU ${app(json)} vs ${app(rawApp)} µs/request` +
      (jsonSvc && rawSvc ? `; through the gateway ${jsonSvc.rps} vs ${rawSvc.rps} req/s (${(jsonSvc.rps / rawSvc.rps).toFixed(2)}×)` : ''),
  );
}

function printAdmission({
  bursts,
  overload,
  capacity,
  maxPending,
}: {
  bursts: BurstResult;
  overload: OverloadResult;
  capacity: number;
  maxPending: number;
}): void {
  const bound = capacity + maxPending;
  const conclusive = bursts.trials.filter((trial) => trial.conclusive);
  const admitted = bursts.trials.map((trial) => `${trial.counts['200'] ?? 0}${trial.conclusive ? '' : '*'}`);
  const exact = conclusive.filter((trial) => trial.counts['200'] === bound && trial.counts['429'] === 2 * bound).length;
  const others = bursts.trials
    .map((trial) =>
      Object.entries(trial.counts)
        .filter(([status]) => status !== '200' && status !== '429')
        .map(([status, n]) => `${n}×${status}`)
        .join(' '),
    )
    .filter(Boolean);
  console.log(
    `429 precision (busy: capacity ${capacity}, max_pending_tasks ${maxPending}; bursts of ${3 * bound} simultaneous requests): admitted ${admitted.join(', ')} → exactly ${bound} (the rest 429) in ${exact}/${conclusive.length} conclusive trials${conclusive.length < bursts.trials.length ? ' (* = a request finished before the whole burst was read: not judged)' : ''}; 429 answered in p50 ${bursts.refusedP50us} µs, p99 ${bursts.refusedP99us} µs${others.length ? `; other answers: ${others.join('; ')}` : ''}`,
  );
  console.log(
    `goodput under 2× overload (busy, 20 ms per request, 5 s open loop): saturated ${overload.saturatedRps} req/s, offered ${overload.offeredRps} req/s → ${overload.goodputRps} req/s of 200 (${(overload.goodputRps / overload.saturatedRps).toFixed(2)} of saturated), ${overload.refused} × 429, ${overload.serverErrors} × 5xx, ${overload.failures} failed`,
  );
}
