/**
 * `npm run bench:classes`: issue 32's class figure in one run. A class whose `@svc.enter()` takes 2 s
 * (bench/apps/class_model.py) and a plain function beside it, called from one Python process against a
 * `svc server` as a user runs it: the first call of each (the class's waits for its `enter`), then
 * `BENCH_CLASS_CALLS` warm calls of each, alternated. Goal: a warm call of the method costs no more than
 * the plain function's (the ratio of the medians ≤ 1.1, the spread of two such medians on a quiet
 * machine). Then the class checkpointed (its 2 s in `@svc.enter(snap=True)`, `checkpoint_enabled=True`) against a
 * function with no set-up, both `keep_warm_seconds=1`: after each pause a call needs a new container of each, the
 * class's forked from its checkpoint. Goal: its first call within 1.3 × the bare function's (`BENCH_CLASS_RESTARTS`
 * pauses, medians). Prints a table and writes bench/results/classes.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot, sdkPythonPath } from '../core/model/paths.js';
import { median } from './gateway/measure.js';
import { stop } from './gateway/proxies.js';
import { startServer } from './server-process.js';

const CALLS = Number(process.env.BENCH_CLASS_CALLS ?? 200);
const RESTARTS = Number(process.env.BENCH_CLASS_RESTARTS ?? 5);
const python = process.env.SVC_PYTHON ?? 'python3';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-classes-'));

interface Timings {
  readonly first: { readonly method: number; readonly plain: number; readonly snap: number; readonly bare: number };
  readonly method: number[];
  readonly plain: number[];
  /** The first call to a new container after a pause: of the checkpointed class, of a function with no set-up. */
  readonly restarted: { readonly snap: number[]; readonly bare: number[] };
}

async function timings(url: string, token: string): Promise<Timings> {
  const child = spawn(python, [path.join(packageRoot, 'bench', 'class_timing.py'), String(CALLS), String(RESTARTS)], {
    cwd: path.join(packageRoot, 'bench', 'apps'),
    env: { ...process.env, SVC_SERVER: url, SVC_TOKEN: token, SVC_CONFIG_DIR: path.join(scratch, 'config'), PYTHONPATH: sdkPythonPath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let errors = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`class_timing.py exited with ${code}:\n${errors}`);
  return JSON.parse(out.trim().split('\n').at(-1)!) as Timings;
}

const dataDir = path.join(scratch, 'data');
mkdirSync(dataDir);
const server = await startServer(dataDir);
try {
  const result = await timings(server.url, server.token);
  const method = median(result.method);
  const plain = median(result.plain);
  const ratio = method / plain;
  const snap = median(result.restarted.snap);
  const bare = median(result.restarted.bare);
  const snapRatio = snap / bare;
  const rows = [
    ['first call of the method (its 2 s enter)', `${result.first.method.toFixed(0)} ms`, ''],
    ['first call of the plain function', `${result.first.plain.toFixed(0)} ms`, ''],
    [`warm call of the method (median of ${CALLS})`, `${method.toFixed(2)} ms`, ''],
    [`warm call of the plain function (median of ${CALLS})`, `${plain.toFixed(2)} ms`, ''],
    ['method ÷ function', ratio.toFixed(2), `≤ 1.1 ${ratio <= 1.1 ? '(met)' : '(not met)'}`],
    ['first call of the checkpointed class (2 s snap enter)', `${result.first.snap.toFixed(0)} ms`, ''],
    [`new container of it, first call (median of ${RESTARTS})`, `${snap.toFixed(0)} ms`, ''],
    [`new container of a bare function, first call (median)`, `${bare.toFixed(0)} ms`, ''],
    ['checkpointed class ÷ bare start', snapRatio.toFixed(2), `≤ 1.3 ${snapRatio <= 1.3 ? '(met)' : '(not met)'}`],
  ];
  process.stdout.write(`classes (${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'})\n`);
  for (const [what, value, goal] of rows) process.stdout.write(`${what!.padEnd(52)} ${value!.padStart(10)}  ${goal}\n`);
  const results = path.join(packageRoot, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(
    path.join(results, 'classes.json'),
    `${JSON.stringify({ calls: CALLS, ...result, medians: { method, plain, ratio, snap, bare, snapRatio } }, null, 2)}\n`,
  );
} finally {
  await stop(server.child);
  rmSync(scratch, { recursive: true, force: true });
}
