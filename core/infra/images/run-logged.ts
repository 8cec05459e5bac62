import { SvcError } from '../../model/errors.js';
import { spawnGroup } from '../processes/group.js';
import type { BuildLog } from './types.js';

/** How many of the last output lines a failed step quotes in its error. */
const TAIL_LINES = 20;

export interface LoggedStep {
  readonly command: string;
  readonly args: readonly string[];
  /** What the step does, for the error: "pip install six". */
  readonly what: string;
  readonly hint: string;
  /** Variables added to the build's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Runs a build step in its own process group, passing each output line to
 * the log; a failure is `image_build_failed` quoting the last lines of the
 * step's own output (pip's error). The group matters: pip runs under
 * `python -m venv` / ensurepip as grandchildren, and all of them must die
 * with svc (Ctrl-C or SIGTERM during a build).
 */
export async function runLogged(step: LoggedStep, log: BuildLog): Promise<void> {
  const tail: string[] = [];
  const group = spawnGroup({
    command: step.command,
    args: step.args,
    cwd: process.cwd(),
    env: { ...buildEnv(), ...step.env },
    onLine: (_stream, line) => {
      if (!line.trim()) return;
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
      log(line);
    },
  });
  // Nothing async runs during 'exit': kill the whole group at once.
  const killOnExit = () => group.killNow();
  process.on('exit', killOnExit);
  try {
    const { code, signal } = await group.exited;
    if (code === 0) return;
    const how = signal ? `was stopped by ${signal}` : code === null ? 'could not start' : `exited with code ${code}`;
    throw new SvcError('image_build_failed', `${step.what} ${how}:\n${tail.join('\n')}`, { hint: step.hint });
  } finally {
    process.off('exit', killOnExit);
  }
}

/** What a build step must not inherit: another environment's packages would change what pip installs. */
function buildEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.PYTHONPATH;
  delete env.VIRTUAL_ENV;
  return env;
}
