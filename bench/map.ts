/**
 * `npm run bench:map`: issue 31's `.map` figures, in one run, on this machine.
 *
 * `svc server` runs as a user runs it (the CLI, its own process, so that its CPU and memory are
 * its own: its containers are its children, counted apart); bench/map_client.py maps
 * bench/apps/fanout.py's `square` (`x * x`, `max_containers=4`) against it from Python:
 *
 * - `.map` of 10,000 inputs, warm: inputs per second end to end, and the server's CPU per input;
 *   beside it, `multiprocessing.Pool(4).map` of the same function over as many, in the same run;
 * - the first result of a warm map (20 maps of 4 inputs; median);
 * - `.spawn()` warm: its time to return, and `FunctionCall.get()` of an ended call against one API
 *   round trip through the gateway (medians);
 * - a map of N inputs from a generator (BENCH_MAP_INPUTS, 1,000,000 by default): the resident
 *   memory of the client and of the server after the first 10,000 results and at the end.
 *
 * Prints a table and writes bench/results/map.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { packageRoot, sdkPythonPath } from '../core/model/paths.js';
import { processCpu } from './gateway/cpu.js';
import { rssOf, startServer } from './server-process.js';
import { median } from './gateway/measure.js';
import { stop } from './gateway/proxies.js';

const INPUTS = Number(process.env.BENCH_MAP_INPUTS ?? 1_000_000);
if (!(INPUTS >= 10_000)) throw new Error(`BENCH_MAP_INPUTS=${process.env.BENCH_MAP_INPUTS} must be 10000 or more`);
const python = process.env.SVC_PYTHON ?? 'python3';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-map-'));
const MiB = 1024 * 1024;

interface Phase {
  readonly phase: string;
  readonly [field: string]: unknown;
}

/** Runs the client; at each phase it names, `sample` reads the server, then the client goes on. */
async function runClient(url: string, token: string, sample: (phase: Phase) => void): Promise<Phase[]> {
  const client = spawn(python, [path.join(packageRoot, 'bench', 'map_client.py'), String(INPUTS)], {
    cwd: path.join(packageRoot, 'bench', 'apps'),
    env: { ...process.env, PYTHONPATH: sdkPythonPath, SVC_SERVER: url, SVC_TOKEN: token, SVC_CONFIG_DIR: path.join(scratch, 'config') },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const phases: Phase[] = [];
  const exited = new Promise<number | null>((resolve) => client.once('exit', resolve));
  for await (const line of createInterface({ input: client.stdout! })) {
    const phase = JSON.parse(line) as Phase;
    phases.push(phase);
    sample(phase);
    process.stderr.write(`map bench: ${phase.phase}\n`);
    client.stdin!.write('\n');
  }
  const code = await exited;
  if (code !== 0) throw new Error(`bench/map_client.py exited with ${code}`);
  return phases;
}

function report(phases: Phase[], samples: Map<string, { cpuUs: number; rss: number }>) {
  const byName = (name: string) => phases.find((p) => p.phase === name)!;
  const throughput = byName('throughput-end');
  const pool = byName('pool');
  const first = byName('first').ms as number[];
  const spawned = byName('spawn');
  const tenK = byName('memory-10k');
  const end = byName('memory-end');
  const serverCpuUs = samples.get('throughput-end')!.cpuUs - samples.get('throughput-start')!.cpuUs;
  const inputs = throughput.inputs as number;
  const round = (n: number, digits = 0) => Number(n.toFixed(digits));
  return {
    at: new Date().toISOString(),
    machine: `${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown cpu'}`,
    map: {
      inputs,
      inputsPerSecond: round(inputs / (throughput.seconds as number)),
      serverCpuUsPerInput: round(serverCpuUs / inputs, 1),
    },
    pool: {
      processes: 4,
      inputsPerSecond: round(inputs / (pool.seconds as number)),
      cpuUsPerInput: round(((pool.cpu as number) * 1e6) / inputs, 1),
    },
    firstResultMs: { median: round(median(first), 1), samples: first.map((ms) => round(ms, 2)) },
    spawn: {
      returnMsMedian: round(median(spawned.spawnMs as number[]), 2),
      getOfEndedMsMedian: round(median(spawned.getMs as number[]), 2),
      apiRoundTripMsMedian: round(median(spawned.roundTripMs as number[]), 2),
    },
    memory: {
      inputs: end.inputs,
      seconds: round(end.seconds as number, 1),
      clientMiB: { after10k: round((tenK.rss as number) / MiB, 1), atEnd: round((end.rss as number) / MiB, 1) },
      serverMiB: { after10k: round(samples.get('memory-10k')!.rss / MiB, 1), atEnd: round(samples.get('memory-end')!.rss / MiB, 1) },
    },
    goals: { inputsPerSecond: 1000, firstResultMs: 100, memoryGrowthMiB: 50, spawnReturnMs: 5, getOfEndedRoundTrips: 2 },
  };
}

function print(result: ReturnType<typeof report>): void {
  const { map, pool, firstResultMs, memory, spawn } = result;
  const growth = (m: { after10k: number; atEnd: number }) => {
    const delta = m.atEnd - m.after10k;
    return `${m.after10k} → ${m.atEnd} MiB (${delta >= 0 ? '+' : '−'}${Math.abs(delta).toFixed(1)})`;
  };
  // /proc counts CPU in 10 ms ticks: a Pool.map of trivial inputs may take less in all.
  const poolCpu = pool.cpuUsPerInput > 0 ? `${pool.cpuUsPerInput} µs` : `< ${(10_000 / map.inputs).toFixed(1)} µs`;
  const rows: [string, string, string][] = [
    [`.map of ${map.inputs} × square, warm (4 containers)`, `${map.inputsPerSecond} inputs/s`, '≥ 1000'],
    ['  svc server CPU per input', `${map.serverCpuUsPerInput} µs`, ''],
    [`multiprocessing.Pool(4).map of ${map.inputs}`, `${pool.inputsPerSecond} inputs/s`, ''],
    ['  Pool CPU per input (parent + workers)', poolCpu, ''],
    ['first result of a warm .map (median)', `${firstResultMs.median} ms`, '≤ 100 ms'],
    ['.spawn() warm, to return (median)', `${spawn.returnMsMedian} ms`, '≤ 5 ms'],
    [
      'FunctionCall.get() of an ended call (median)',
      `${spawn.getOfEndedMsMedian} ms = ${(spawn.getOfEndedMsMedian / spawn.apiRoundTripMsMedian).toFixed(2)} round trips`,
      '≤ 2',
    ],
    ['  one API round trip (GET /whoami, median)', `${spawn.apiRoundTripMsMedian} ms`, ''],
    [`client RSS, 10,000 → ${memory.inputs} inputs`, growth(memory.clientMiB), '+ ≤ 50 MiB'],
    [`server RSS, 10,000 → ${memory.inputs} inputs`, growth(memory.serverMiB), '+ ≤ 50 MiB'],
  ];
  process.stdout.write(`map (${result.machine}; the map of ${memory.inputs} took ${memory.seconds} s)\n`);
  for (const [what, value, goal] of rows) process.stdout.write(`${what.padEnd(46)}${value.padStart(30)}  ${goal}\n`);
}

try {
  const server = await startServer(path.join(scratch, 'data'));
  try {
    const cpu = processCpu(server.child.pid!);
    const samples = new Map<string, { cpuUs: number; rss: number }>();
    const phases = await runClient(server.url, server.token, (phase) =>
      samples.set(phase.phase, { cpuUs: cpu(), rss: rssOf(server.child.pid!) }),
    );
    const result = report(phases, samples);
    print(result);
    mkdirSync(path.join(packageRoot, 'bench', 'results'), { recursive: true });
    writeFileSync(path.join(packageRoot, 'bench', 'results', 'map.json'), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await stop(server.child);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
