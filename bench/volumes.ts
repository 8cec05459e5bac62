/**
 * `npm run bench:volumes`: issue 32's volume figures in one run, on this machine. A file of
 * `BENCH_VOLUME_BYTES` random bytes (2 GiB by default) is copied with `cp` on the same disk (then
 * `sync`ed: svc syncs an upload before it takes its name, and the put is judged against that), then
 * sent with `svc volume put` to a `svc server` as a user runs it and fetched back with `svc volume
 * get`, each through the CLI in a process of its own; the copy that comes back must have the same
 * sha256. `BENCH_VOLUME_ROUNDS` (3) paired rounds, each `cp` right before the transfer it is judged
 * against; each ratio is the median of the rounds', with their range. Beside each: the server's and the CLI's resident memory, sampled every 50 ms, against the
 * goal of staying within 50 MiB: the server's most above what it held before the transfer, the CLI's
 * most above the most it held moving a file of 1 MiB (what Node and the CLI take to run at all).
 * Then the first GiB of the stored file is read by the same Python code on the host and in a container
 * that mounts the volume (`svc run`, bench/apps/mounted_read.py), from the disk (the page cache
 * dropped, as root) and from the page cache, against the goal of at least 0.8 × the host's rate.
 *
 * Prints a table and writes bench/results/volumes.json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { packageRoot, sdkPythonPath } from '../core/model/paths.js';
import { stop } from './gateway/proxies.js';
import { CLI, rssOf, startServer } from './server-process.js';

const BYTES = Number(process.env.BENCH_VOLUME_BYTES ?? 2 * 1024 ** 3);
if (!(BYTES >= 1024 * 1024)) throw new Error(`BENCH_VOLUME_BYTES=${process.env.BENCH_VOLUME_BYTES} must be at least 1048576`);
const MiB = 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_VOLUME_ROUNDS ?? 3);
if (!(Number.isInteger(ROUNDS) && ROUNDS >= 1))
  throw new Error(`BENCH_VOLUME_ROUNDS=${process.env.BENCH_VOLUME_ROUNDS} must be a whole number of at least 1`);
const scratch = mkdtempSync(path.join(process.env.BENCH_VOLUME_DIR ?? os.tmpdir(), 'svc-bench-volumes-'));

async function writeRandomFile(file: string, bytes: number): Promise<void> {
  const handle = await open(file, 'w');
  try {
    for (let left = bytes; left > 0; left -= 8 * MiB) await handle.write(randomBytes(Math.min(8 * MiB, left)));
  } finally {
    await handle.close();
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

interface Timed {
  readonly seconds: number;
  /** The most each watched process held above what it held at the start, in bytes. */
  readonly serverGrowth: number;
  /** The most the CLI held. */
  readonly clientPeak: number;
}

/** One paired round: `cp` (and `cp` + `sync`) right before the put, `cp` back right before the get. */
interface Round {
  readonly cpPut: { readonly copied: number; readonly synced: number };
  readonly put: Timed;
  readonly cpGet: { readonly copied: number; readonly synced: number };
  readonly get: Timed;
  /** Whether the copy this round's get fetched has the sha256 of the file put. */
  readonly sameSha256: boolean;
}

/** Runs `node <CLI> <args>` to its end, sampling its and the server's memory. */
async function timedCli(args: readonly string[], env: NodeJS.ProcessEnv, serverPid: number): Promise<Timed> {
  const serverBefore = rssOf(serverPid);
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  let serverPeak = serverBefore;
  let clientPeak = 0;
  const sampler = setInterval(() => {
    serverPeak = Math.max(serverPeak, rssOf(serverPid));
    clientPeak = Math.max(clientPeak, child.pid === undefined ? 0 : rssOf(child.pid));
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`svc ${args.join(' ')} exited with ${code}:\n${errors}`);
  return {
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
    serverGrowth: Math.max(0, serverPeak - serverBefore),
    clientPeak,
  };
}

/** `cp`, then `sync` of the copy (coreutils): seconds to the copy, and to the copy on disk (what svc waits for). */
function timedCp(from: string, to: string): { readonly copied: number; readonly synced: number } {
  const started = process.hrtime.bigint();
  const copied = spawnSync('cp', [from, to]);
  if (copied.status !== 0) throw new Error(`cp failed: ${copied.stderr}`);
  const done = process.hrtime.bigint();
  const synced = spawnSync('sync', [to]);
  if (synced.status !== 0) throw new Error(`sync failed: ${synced.stderr}`);
  const seconds = (end: bigint) => Number(end - started) / 1e9;
  return { copied: seconds(done), synced: seconds(process.hrtime.bigint()) };
}

/** The first GiB of the file (all of a smaller one) is what the mounted-volume reads read. */
const READ_BYTES = Math.min(BYTES, 1024 ** 3);
const apps = path.join(packageRoot, 'bench', 'apps');

/** Seconds the same Python code took to read READ_BYTES of `file`: run here, and in a container that mounts the volume. */
function mountedReads(file: string, env: NodeJS.ProcessEnv): { cache: string; host: number; mounted: number }[] {
  const sdk = { ...env, PYTHONPATH: sdkPythonPath };
  const host = () => Number(runOut('python3', [path.join(apps, 'mounted_read.py'), file, String(READ_BYTES)], sdk));
  const mounted = () => Number(runOut(process.execPath, [CLI, 'run', 'mounted_read.py:read_mounted', 'big.bin', String(READ_BYTES)], env));
  mounted(); // the run's image and container start here, not in a timed read
  // Cold: from the disk, each after the kernel dropped its page cache (root only); warm: from the page cache.
  const cold = canDropCaches() ? [{ cache: 'cold: page cache dropped', host: dropped(host), mounted: dropped(mounted) }] : [];
  host();
  return [...cold, { cache: 'warm: in the page cache', host: host(), mounted: mounted() }];
}

function runOut(command: string, args: readonly string[], env: NodeJS.ProcessEnv): string {
  const ran = spawnSync(command, args, { cwd: apps, env, encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${ran.status}:\n${ran.stderr}`);
  return ran.stdout.trim();
}

function canDropCaches(): boolean {
  return process.getuid?.() === 0 && spawnSync('sh', ['-c', 'sync && echo 1 > /proc/sys/vm/drop_caches']).status === 0;
}

function dropCaches(): void {
  spawnSync('sh', ['-c', 'sync && echo 1 > /proc/sys/vm/drop_caches']);
}

function dropped(read: () => number): number {
  dropCaches();
  return read();
}

const source = path.join(scratch, 'big.bin');
await writeRandomFile(source, BYTES);
const dataDir = path.join(scratch, 'data');
mkdirSync(dataDir);
const server = await startServer(dataDir);
try {
  const env = {
    ...process.env,
    SVC_SERVER: server.url,
    SVC_TOKEN: server.token,
    SVC_CONFIG_DIR: path.join(scratch, 'config'),
    NO_COLOR: '1',
  };
  await timedCli(['volume', 'create', 'bench'], env, server.child.pid!);
  const small = path.join(scratch, 'small.bin');
  await writeRandomFile(small, MiB);
  const baseline = {
    put: (await timedCli(['volume', 'put', 'bench', small, 'small.bin'], env, server.child.pid!)).clientPeak,
    get: (await timedCli(['volume', 'get', 'bench', 'small.bin', path.join(scratch, 'small-back.bin')], env, server.child.pid!)).clientPeak,
  };
  // Paired rounds, each `cp` right before the transfer it is compared with: this disk's and page cache's
  // rates move by 2× between runs, so each figure is the median of the rounds' ratios, with their range.
  // Cold rounds (as root) drop the page cache before each copy and transfer: the file comes from the disk,
  // as a file of many GiB does; warm ones leave it, and measure the CPU each path costs.
  const stored = path.join(dataDir, 'volumes', 'default', 'bench', 'big.bin');
  const fetched = path.join(scratch, 'fetched.bin');
  const sourceSha = await sha256Of(source);
  const transferRounds = async (cold: boolean): Promise<Round[]> => {
    const rounds: Round[] = [];
    const settle = () => (cold ? dropCaches() : undefined);
    for (let round = 0; round < ROUNDS; round += 1) {
      settle();
      const cpPut = timedCp(source, path.join(scratch, 'cp-copy.bin'));
      rmSync(path.join(scratch, 'cp-copy.bin'));
      settle();
      const put = await timedCli(['volume', 'put', 'bench', source, 'big.bin'], env, server.child.pid!);
      settle();
      const cpGet = timedCp(stored, path.join(scratch, 'cp-back.bin'));
      rmSync(path.join(scratch, 'cp-back.bin'));
      rmSync(fetched, { force: true });
      settle();
      const get = await timedCli(['volume', 'get', 'bench', 'big.bin', fetched], env, server.child.pid!);
      rounds.push({ cpPut, put, cpGet, get, sameSha256: (await sha256Of(fetched)) === sourceSha });
    }
    return rounds;
  };
  const byCache = [
    ...(canDropCaches() ? [{ cache: 'cold: page cache dropped', rounds: await transferRounds(true) }] : []),
    { cache: 'warm: in the page cache', rounds: await transferRounds(false) },
  ];
  const same = byCache.every(({ rounds }) => rounds.every((round) => round.sameSha256));
  const reads = mountedReads(stored, env);
  const rate = (seconds: number) => BYTES / MiB / seconds;
  const readRate = (seconds: number) => READ_BYTES / MiB / seconds;
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const spread = (values: number[]) => `(${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
  const transferRows = (cache: string, rounds: Round[]) => {
    const rates = (pick: (r: Round) => number) => median(rounds.map((r) => rate(pick(r))));
    const putToCpSync = rounds.map((r) => r.cpPut.synced / r.put.seconds);
    const putToCp = rounds.map((r) => r.cpPut.copied / r.put.seconds);
    const getToCp = rounds.map((r) => r.cpGet.copied / r.get.seconds);
    const most = (pick: (r: Round) => number) => Math.max(...rounds.map(pick));
    return [
      [`${cache}; ${ROUNDS} paired rounds, medians (range)`, '', '', ''],
      ['cp (the same file, the same disk)', `${rates((r) => r.cpPut.copied).toFixed(0)} MiB/s`, '', ''],
      ['cp, then sync of the copy', `${rates((r) => r.cpPut.synced).toFixed(0)} MiB/s`, '', ''],
      [
        'svc volume put (synced before it takes its name)',
        `${rates((r) => r.put.seconds).toFixed(0)} MiB/s`,
        `${median(putToCpSync).toFixed(2)} × cp+sync`,
        `≥ 0.5 × ${spread(putToCpSync)}`,
      ],
      ['', '', `${median(putToCp).toFixed(2)} × cp`, `        ${spread(putToCp)}`],
      ['  server memory, most above its start', `+${(most((r) => r.put.serverGrowth) / MiB).toFixed(1)} MiB`, '', '≤ 50 MiB'],
      [
        '  CLI memory, most above a 1 MiB put',
        `+${(Math.max(0, most((r) => r.put.clientPeak) - baseline.put) / MiB).toFixed(1)} MiB`,
        '',
        '≤ 50 MiB',
      ],
      ['cp back from the volume', `${rates((r) => r.cpGet.copied).toFixed(0)} MiB/s`, '', ''],
      [
        'svc volume get (not synced, as cp)',
        `${rates((r) => r.get.seconds).toFixed(0)} MiB/s`,
        `${median(getToCp).toFixed(2)} × cp`,
        `≥ 0.5 × ${spread(getToCp)}`,
      ],
      ['  server memory, most above its start', `+${(most((r) => r.get.serverGrowth) / MiB).toFixed(1)} MiB`, '', '≤ 50 MiB'],
      [
        '  CLI memory, most above a 1 MiB get',
        `+${(Math.max(0, most((r) => r.get.clientPeak) - baseline.get) / MiB).toFixed(1)} MiB`,
        '',
        '≤ 50 MiB',
      ],
    ];
  };
  const rows = [
    ...byCache.flatMap(({ cache, rounds }) => transferRows(cache, rounds)),
    ['the copy each get brought back', same ? 'same sha256' : 'DIFFERENT sha256', '', 'same'],
    ...reads.flatMap(({ cache, host, mounted }) => [
      [`read ${(READ_BYTES / MiB).toFixed(0)} MiB on the host (${cache})`, `${readRate(host).toFixed(0)} MiB/s`, '', ''],
      [
        `  the same from a mounted volume, in a container`,
        `${readRate(mounted).toFixed(0)} MiB/s`,
        `${(host / mounted).toFixed(2)} × host`,
        '≥ 0.8 ×',
      ],
    ]),
  ];
  process.stdout.write(`volumes (${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'}; a file of ${(BYTES / MiB).toFixed(0)} MiB)\n`);
  for (const row of rows)
    process.stdout.write(`${row[0]!.padEnd(50)} ${row[1]!.padStart(18)} ${row[2]!.padStart(17)}  ${row[3]}\n`.trimEnd() + '\n');
  const results = path.join(packageRoot, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(
    path.join(results, 'volumes.json'),
    `${JSON.stringify({ bytes: BYTES, transfers: byCache, cliBaseline: baseline, sameSha256: same, readBytes: READ_BYTES, reads }, null, 2)}\n`,
  );
  if (!same) process.exitCode = 1;
} finally {
  await stop(server.child);
  rmSync(scratch, { recursive: true, force: true });
}
