/**
 * A mocha root-hook plugin (loaded by `.mocharc.json`): when
 * `SVC_TEST_TIMINGS` names a file, each test file appends one JSON line to
 * it: `{"file", "startedAt", "ms", "cpuMs", "pid"}`, from its first hook to
 * its last, so a run shows which files its time goes to
 * (`node dist/test/slowest.js <that file>`). Without the variable it does
 * nothing.
 *
 * `cpuMs` is the CPU time the file used, its worker's and that of the
 * processes it started and waited for (Python workers, pip, tsc…): on a
 * machine shared with other work, wall times swell and CPU times hardly do,
 * and `ms - cpuMs` is time spent waiting (sleeps, time-outs, the network).
 *
 * In parallel mode each worker runs the root hooks once per file; in a serial
 * run they run once for the whole run, which then counts as one file.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';

const target = process.env.SVC_TEST_TIMINGS;
/** Linux's clock ticks per second for /proc times (USER_HZ, 100 on every common build). */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds of this process and of its children that have ended, or 0 where /proc is missing. */
function cpuMs(): number {
  const own = process.cpuUsage();
  let children = 0;
  try {
    // Fields after the command name's closing parenthesis; cutime and cstime are fields 16 and 17 of the whole line.
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    children = ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
  } catch {
    children = 0;
  }
  return (own.user + own.system) / 1000 + children;
}

let startedAt = 0;
let cpuAtStart = 0;

function fileOf(context: Mocha.Context): string {
  const suites = context.test?.parent?.suites ?? [];
  const file = suites.find((suite) => suite.file)?.file;
  return file ? path.relative(packageRoot, file) : '(unknown)';
}

export const mochaHooks: Mocha.RootHookObject = target
  ? {
      beforeAll() {
        startedAt = Date.now();
        cpuAtStart = cpuMs();
      },
      afterAll(this: Mocha.Context) {
        const line = {
          file: fileOf(this),
          startedAt,
          ms: Date.now() - startedAt,
          cpuMs: Math.round(cpuMs() - cpuAtStart),
          pid: process.pid,
        };
        appendFileSync(target, `${JSON.stringify(line)}\n`);
      },
    }
  : {};
