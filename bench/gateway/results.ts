/**
 * What a bench run was measured on (machine, versions, commit) and where its
 * figures go: bench/results/latest.json, committed beside the chart so that
 * docs/benchmarks.md can cite a run (partial.json for a BENCH_ONLY run, not committed).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { versionOf } from './proxies.js';

export const resultsDir = path.join(packageRoot, 'bench', 'results');

export interface Machine {
  readonly cores: number;
  readonly cpu: string;
  readonly node: string;
  readonly python: string | null;
  readonly uvicorn: string | null;
  readonly nginx: string | null;
  readonly haproxy: string | null;
  readonly wrk: string | null;
  /** Each Go peer run: its binary and version (they embed none when built from a checkout: `<ENV>_VERSION` names it). */
  readonly peers: Record<string, { readonly binary: string; readonly version: string | null }>;
}

export interface Commit {
  readonly sha: string;
  readonly dirty: boolean;
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((text) => text.startsWith('model name'));
    if (line) return line.split(':')[1]!.trim();
  } catch {
    // not Linux: os.cpus() below
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

/** The versions of what ran; `peers` maps a Go peer's name to its binary and its version variable's name. */
export function machine(python: string, peers: Record<string, { binary: string; versionEnv: string }>): Machine {
  const uvicorn = versionOf(python, ['-c', 'import uvicorn; print(uvicorn.__version__)']);
  return {
    cores: os.cpus().length,
    cpu: cpuModel(),
    node: process.version,
    python: versionOf(python, ['--version']),
    uvicorn,
    nginx: versionOf('nginx', ['-v'])?.replace('nginx version: ', '') ?? null,
    haproxy: versionOf('haproxy', ['-v'])?.replace(/^HAProxy version (\S+).*/, 'haproxy/$1') ?? null,
    wrk: versionOf('wrk', ['--version'])?.split(' [')[0] ?? null,
    peers: Object.fromEntries(
      Object.entries(peers).map(([name, { binary, versionEnv }]) => [name, { binary, version: process.env[versionEnv] ?? null }]),
    ),
  };
}

export function commit(): Commit {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: packageRoot, encoding: 'utf8' }).trim();
  try {
    // bench/results/ is what this run writes: its own change does not make the tree dirty.
    return { sha: git('rev-parse', '--short', 'HEAD'), dirty: git('status', '--porcelain', '--', '.', ':!bench/results').length > 0 };
  } catch {
    return { sha: 'unknown', dirty: false };
  }
}

export function describe(machineInfo: Machine, at: Commit): string {
  return `${machineInfo.cores} cores (${machineInfo.cpu}), Node ${machineInfo.node}, ${machineInfo.python ?? 'Python ?'}, commit ${at.sha}${at.dirty ? ' (dirty)' : ''}`;
}

/** `latest` for a whole run (committed), `partial` for a BENCH_ONLY one (ignored by git). */
export function writeResults(name: 'latest' | 'partial', results: object): string {
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}
