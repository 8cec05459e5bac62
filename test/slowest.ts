/**
 * `node dist/test/slowest.js <timings.jsonl> [count]`: the slowest test files
 * of a run made with `SVC_TEST_TIMINGS=<timings.jsonl>` (see
 * test/helpers/file-timings.ts), by wall time, with the CPU time each used
 * and when it started and ended, counted from the run's first file.
 */
import { readFileSync } from 'node:fs';

interface Timing {
  readonly file: string;
  readonly startedAt: number;
  readonly ms: number;
  readonly cpuMs: number;
}

const [source, countText = '20'] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: node dist/test/slowest.js <timings.jsonl> [count]\n');
  process.exit(2);
}
const timings = readFileSync(source, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as Timing);
const first = Math.min(...timings.map((t) => t.startedAt));
const seconds = (ms: number) => (ms / 1000).toFixed(1).padStart(6);
const total = (pick: (t: Timing) => number) => timings.reduce((sum, t) => sum + pick(t), 0);

console.log(
  `${timings.length} files, ${seconds(Math.max(...timings.map((t) => t.startedAt + t.ms)) - first)} s from the first start to the last end; sums: wall ${seconds(total((t) => t.ms))} s, cpu ${seconds(total((t) => t.cpuMs))} s`,
);
console.log('  wall    cpu  start    end  file');
for (const t of [...timings].sort((a, b) => b.ms - a.ms).slice(0, Number(countText))) {
  console.log(`${seconds(t.ms)} ${seconds(t.cpuMs)} ${seconds(t.startedAt - first)} ${seconds(t.startedAt + t.ms - first)}  ${t.file}`);
}
