#!/usr/bin/env node
/**
 * The svc command: `svc run <target> …` is taken first (its arguments pass through untouched,
 * run-args.ts); everything else is the command tree of program.ts.
 */
import { printError } from './output.js';
import { withLoneDash } from './flags.js';
import { prog } from './program.js';
import { splitRunArgs } from './run-args.js';

try {
  const runCall = splitRunArgs(process.argv.slice(2));
  if (runCall !== null) await (await import('./commands/run.js')).default(runCall.target, runCall.args);
  else {
    // `--no-browser` (svc login) is mri's negation of `browser`, which must be a known option for it to be taken.
    await prog.parse(withLoneDash(process.argv), {
      unknown: (flag: string) => `unknown option ${flag}`,
      alias: { browser: [], watch: [] },
    });
  }
} catch (error) {
  process.exitCode = printError(error);
}
