/**
 * test/file-durations.json: seconds of wall time per compiled test file
 * (`dist/test/…test.js`), from a timed run; test/run-mocha.ts starts the
 * longest first. Figures from a busy machine are fine: only their order counts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';

export type FileDurations = Record<string, number>;

const durationsFile = path.join(packageRoot, 'test', 'file-durations.json');

export function readDurations(): FileDurations {
  return JSON.parse(readFileSync(durationsFile, 'utf8')) as FileDurations;
}

export function writeDurations(durations: FileDurations): void {
  const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(durationsFile, `${JSON.stringify(sorted, null, 2)}\n`);
}
