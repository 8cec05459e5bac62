/**
 * `npm run bench:classes`: issue 32's class figure in one run. A class whose `@svc.enter()` takes 2 s
 * (bench/apps/class_model.py) and a plain function beside it, called from one Python process against a
 * `svc server` as a user runs it: the first call of each (the class's waits for its `enter`), then
 * `BENCH_CLASS_CALLS` warm calls of each, alternated. Goal: a warm call of the method costs no more than
 * the plain function's (the ratio of the medians ≤ 1.1, the spread of two such medians on a quiet
 * machine). Prints a table and writes bench/results/classes.json.
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
const python = process.env.SVC_PYTHON ?? 'python3';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-classes-'));

interface Timings {
  readonly first: { readonly method: number; readonly plain: number };
  readonly method: number[];
  readonly plain: number[];
}

async function timings(url: string, token: string): Promise<Timings> {
  const child = spawn(python, [path.join(packageRoot, 'bench', 'class_timing.py'), String(CALLS)], {
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
  const rows = [
    ['first call of the method (its 2 s enter)', `${result.first.method.toFixed(0)} ms`, ''],
    ['first call of the plain function', `${result.first.plain.toFixed(0)} ms`, ''],
    [`warm call of the method (median of ${CALLS})`, `${method.toFixed(2)} ms`, ''],
    [`warm call of the plain function (median of ${CALLS})`, `${plain.toFixed(2)} ms`, ''],
    ['method ÷ function', ratio.toFixed(2), `≤ 1.1 ${ratio <= 1.1 ? '(met)' : '(not met)'}`],
  ];
  process.stdout.write(`classes (${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'})\n`);
  for (const [what, value, goal] of rows) process.stdout.write(`${what!.padEnd(52)} ${value!.padStart(10)}  ${goal}\n`);
  const results = path.join(packageRoot, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(
    path.join(results, 'classes.json'),
    `${JSON.stringify({ calls: CALLS, ...result, medians: { method, plain, ratio } }, null, 2)}\n`,
  );
} finally {
  await stop(server.child);
  rmSync(scratch, { recursive: true, force: true });
}
