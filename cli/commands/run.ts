/**
 * `svc run <file_or_module>:<function> [args...]`: one remote call of a function.
 *
 * The Python SDK does the work (`python -m svc.run`, sdk/python/svc/run): it
 * imports the module, converts the words to the function's arguments by their
 * annotations, makes the same call as `.remote()` and prints the result on
 * stdout, logs and errors on stderr. This command only starts it with the same
 * arguments, the SDK of this svc first on PYTHONPATH, stdio inherited, and
 * exits with its status: 0 the result is on stdout, 1 the function raised or
 * svc failed, 2 wrong usage or arguments.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pythonNotFound } from '../../core/infra/images/find-python.js';
import { sdkPythonPath } from '../../core/model/paths.js';

/** What `python -m svc.run` calls itself in its messages and usage. */
const PROG = 'svc run';

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

export default async function run(target: string, args: string[]): Promise<void> {
  const python = process.env.SVC_PYTHON || 'python3';
  const inherited = process.env.PYTHONPATH;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // The SDK comes first so `import svc` finds this svc's SDK, not an older pip-installed one.
    PYTHONPATH: inherited ? `${sdkPythonPath}${path.delimiter}${inherited}` : sdkPythonPath,
    PYTHONIOENCODING: 'utf-8',
    SVC_RUN_PROG: PROG,
  };
  const child = spawn(python, ['-m', 'svc.run', target, ...args], { stdio: 'inherit', env });
  // Ctrl-C reaches Python from the terminal itself (same process group): it ends its run and
  // exits 130. svc waits for that instead of dying first; a SIGTERM sent to svc alone is passed on.
  const onInterrupt = () => {};
  const onTerminate = () => child.kill('SIGTERM');
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onTerminate);
  try {
    const code = await new Promise<number>((resolve, reject) => {
      child.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'EACCES') {
          reject(pythonNotFound(python, error.code, error));
        } else reject(error);
      });
      child.once('exit', (exitCode, signal) => resolve(exitCode ?? 128 + (signal ? (SIGNAL_NUMBERS[signal] ?? 1) : 1)));
    });
    process.exitCode = code;
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerminate);
  }
}
