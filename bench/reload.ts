/**
 * `npm run bench:reload`: how long `svc serve` takes from a save to the new
 * code answering. It serves a copy of examples/quickstart (the real CLI, as
 * a user runs it), then BENCH_RUNS times (default 20) rewrites app.py with a
 * new greeting and polls the hello URL every 2 ms until it answers with the
 * new text; every answer during the swap must be a 200. Then it saves
 * without changes (the same bytes, and a bare touch) and checks that svc
 * printed no reload line. Two modes, side by side: `warm` (the default:
 * warm helper + zygotes) and `cold` (SVC_SERVE_WARM=0 SVC_ZYGOTES=0: a new
 * Python for the manifest and the bundle on each save and spawned
 * containers; what reloading costs without them). BENCH_MODES=warm runs one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../core/model/paths.js';

const runs = Number(process.env.BENCH_RUNS ?? 20);
const modes = (process.env.BENCH_MODES ?? 'warm,cold')
  .split(',')
  .map((mode) => mode.trim())
  .filter(Boolean);
const POLL_MS = 2;
const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
const RELOADED = /✓ reloaded in (\d+) ms \(([^)]*)\)(?: \[debounce (\d+) ms · read (\d+) ms · deploy (\d+) ms\])?/g;

interface Served {
  readonly child: ChildProcess;
  readonly helloUrl: string;
  stderr: string;
}

interface ModeResult {
  readonly mode: string;
  readonly saveToAnswer: number[];
  readonly reported: number[];
  readonly debounce: number[];
  readonly read: number[];
  readonly deploy: number[];
  readonly failedRequests: number;
  readonly unchangedReloads: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function serve(dir: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<Served> {
  const child = spawn(process.execPath, [cli, 'serve', path.join(dir, 'app.py'), '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, NO_COLOR: '1', SVC_SERVE_TIMINGS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  const served = { child, helloUrl: '', stderr: '' };
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (served.stderr.includes('press Ctrl-C to stop') && /Preview of[\s\S]*\n\n$/.test(stdout)) resolve();
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      check();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      served.stderr += chunk.toString();
      check();
    });
    child.once('exit', (code) => reject(new Error(`svc serve exited with ${code}:\n${served.stderr}`)));
  });
  served.helloUrl = /http:\/\/\S+\/hello\/hello/.exec(stdout)![0];
  return served;
}

function reloadLines(served: Served): RegExpExecArray[] {
  return [...served.stderr.matchAll(RELOADED)];
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** Rewrites the greeting, then polls until the new text answers; counts answers that were not 200. */
async function oneSave(file: string, original: string, served: Served, marker: string): Promise<{ ms: number; failed: number }> {
  const source = original.replace('Hello, {name}!', `${marker}, {name}!`);
  let failed = 0;
  const started = performance.now();
  writeFileSync(file, source);
  for (;;) {
    const response = await fetch(served.helloUrl).catch(() => null);
    if (!response || response.status !== 200) {
      failed += 1;
      await response?.body?.cancel();
    } else if (((await response.json()) as { message: string }).message.startsWith(marker)) {
      return { ms: performance.now() - started, failed };
    }
    if (performance.now() - started > 30_000) throw new Error(`no answer with ${marker} after 30 s:\n${served.stderr.slice(-3000)}`);
    await sleep(POLL_MS);
  }
}

async function runMode(mode: string): Promise<ModeResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-reload-'));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-data-'));
  cpSync(path.join(packageRoot, 'examples', 'quickstart'), dir, { recursive: true });
  const file = path.join(dir, 'app.py');
  const original = readFileSync(file, 'utf8');
  const env = mode === 'cold' ? { SVC_SERVE_WARM: '0', SVC_ZYGOTES: '0' } : {};
  const served = await serve(dir, dataDir, env);
  const result: ModeResult = {
    mode,
    saveToAnswer: [],
    reported: [],
    debounce: [],
    read: [],
    deploy: [],
    failedRequests: 0,
    unchangedReloads: 0,
  };
  try {
    const warmups = 2;
    for (let i = 0; i < warmups + runs; i++) {
      const before = reloadLines(served).length;
      const { ms, failed } = await oneSave(file, original, served, `Bench ${mode} ${i}`);
      // The reload line comes once the old version drained; the next save waits for it, as a person would.
      await until(() => reloadLines(served).length > before, 30_000, 'the reload line');
      await sleep(200);
      if (i < warmups) continue;
      result.saveToAnswer.push(ms);
      (result as { failedRequests: number }).failedRequests += failed;
      const line = reloadLines(served).at(-1)!;
      result.reported.push(Number(line[1]));
      if (line[3] !== undefined) {
        result.debounce.push(Number(line[3]));
        result.read.push(Number(line[4]));
        result.deploy.push(Number(line[5]));
      }
    }
    // Saves without changes: the same bytes, then a bare touch. Neither may reload.
    const lines = reloadLines(served).length;
    const current = readFileSync(file, 'utf8');
    for (let i = 0; i < 5; i++) {
      writeFileSync(file, current);
      await sleep(150);
      const now = new Date();
      utimesSync(file, now, now);
      await sleep(150);
    }
    await sleep(500);
    (result as { unchangedReloads: number }).unchangedReloads = reloadLines(served).length - lines;
    if (/reload failed/.test(served.stderr)) throw new Error(`a reload failed:\n${served.stderr.slice(-3000)}`);
  } finally {
    served.child.kill('SIGINT');
    await new Promise((resolve) => served.child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
  return result;
}

function quantile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

const f = (value: number) => (Number.isNaN(value) ? '–' : value.toFixed(0));

const results: ModeResult[] = [];
for (const mode of modes) {
  process.stderr.write(`bench:reload — ${mode}: ${runs} saves…\n`);
  results.push(await runMode(mode));
}
console.log(
  `svc bench:reload — ${os.cpus().length} cores, Node ${process.version}, examples/quickstart, ${runs} saves per mode (after 2 warm-up saves), polling every ${POLL_MS} ms\n`,
);
console.log(
  "| mode | save → new code answering, median | p90 | min–max | svc's reload line, median | debounce · read · deploy (medians) | non-200 answers | reloads on unchanged saves |",
);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  const parts = r.debounce.length
    ? `${f(quantile(r.debounce, 0.5))} · ${f(quantile(r.read, 0.5))} · ${f(quantile(r.deploy, 0.5))} ms`
    : '–';
  console.log(
    `| ${r.mode} | ${f(quantile(r.saveToAnswer, 0.5))} ms | ${f(quantile(r.saveToAnswer, 0.9))} ms | ${f(Math.min(...r.saveToAnswer))}–${f(Math.max(...r.saveToAnswer))} ms | ${f(quantile(r.reported, 0.5))} ms | ${parts} | ${r.failedRequests} | ${r.unchangedReloads} |`,
  );
}
if (results.some((r) => r.failedRequests > 0 || r.unchangedReloads > 0)) {
  console.log('\nFAILED: a request failed during a swap, or an unchanged save reloaded.');
  process.exitCode = 1;
}
