/**
 * `node dist/test/record-durations.js <timings.jsonl>`: writes the wall time
 * of each file of a run made with `SVC_TEST_TIMINGS=<timings.jsonl>`
 * (test/helpers/file-timings.ts) into test/file-durations.json
 * (test/helpers/file-durations.ts). Files the run did not time keep their
 * figure; files that no longer exist are dropped.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../core/model/paths.js';
import { readDurations, writeDurations } from './helpers/file-durations.js';

const source = process.argv[2];
if (!source) {
  process.stderr.write('usage: node dist/test/record-durations.js <timings.jsonl>\n');
  process.exit(2);
}
const durations = readDurations();
for (const line of readFileSync(source, 'utf8').split('\n').filter(Boolean)) {
  const { file, ms } = JSON.parse(line) as { file: string; ms: number };
  durations[file] = Math.round(ms / 100) / 10;
}
for (const file of Object.keys(durations)) {
  if (!existsSync(path.join(packageRoot, file))) delete durations[file];
}
writeDurations(durations);
