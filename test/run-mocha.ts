/**
 * `node dist/test/run-mocha.js <suite>...` (suites: unit, e2e): runs the named
 * suites' mocha files in ONE parallel pool (`.mocharc.json` applies), longest
 * first. A pool of N workers is done when its last file is; a long file that
 * starts late runs on alone while the other workers idle, so the long files
 * go first and the short ones fill in around them. The order comes from
 * test/file-durations.json (test/helpers/file-durations.ts); a file it
 * does not list yet goes first, as if it were the longest. `SVC_TEST_JOBS`
 * overrides the pool's size: three times the cores, from 2 to 8, since many
 * files spend much of their time waiting on the processes they start (with
 * twice, the cores sat half idle while such files ran together).
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../core/model/paths.js';
import { readDurations } from './helpers/file-durations.js';

/** Which compiled test files each suite runs, as folders under dist/test. */
const SUITES: Record<string, { readonly under: string; readonly except: readonly string[] }> = {
  unit: { under: 'dist/test', except: ['dist/test/e2e', 'dist/test/cluster', 'dist/test/acme', 'dist/test/gpu'] },
  e2e: { under: 'dist/test/e2e', except: [] },
};

function filesOf(suite: string): string[] {
  const chosen = SUITES[suite];
  if (!chosen) throw new Error(`unknown suite ${suite}: one of ${Object.keys(SUITES).join(', ')}`);
  const found = readdirSync(path.join(packageRoot, chosen.under), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.js'))
    .map((name) => path.posix.join(chosen.under, name.split(path.sep).join('/')));
  return found.filter((file) => !chosen.except.some((folder) => file.startsWith(`${folder}/`)));
}

const suites = process.argv.slice(2);
if (suites.length === 0) {
  process.stderr.write(`usage: node dist/test/run-mocha.js <${Object.keys(SUITES).join('|')}>...\n`);
  process.exit(2);
}
const seconds = readDurations();
const files = suites.flatMap(filesOf).sort((a, b) => (seconds[b] ?? Infinity) - (seconds[a] ?? Infinity) || a.localeCompare(b));
const jobs = Number(process.env.SVC_TEST_JOBS) || Math.min(8, Math.max(2, 3 * os.availableParallelism()));

const mocha = createRequire(import.meta.url).resolve('mocha/bin/mocha.js');
const child = spawn(process.execPath, [mocha, '--parallel', '--jobs', String(jobs), ...files], { cwd: packageRoot, stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
