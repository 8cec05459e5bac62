/**
 * `svc shell`: a program on a pseudo-terminal of its own inside a running local container, where
 * `svc container exec` runs its commands (exec.ts: cgroup, mount namespace, environment, code folder).
 * Node has no pseudo-terminals of its own, so the container's Python opens one
 * (sdk/python/svc/runtime/_terminal.py, run by its path: it imports nothing of svc or the app);
 * sizes go to it as JSON lines on a fourth pipe.
 */
import { PassThrough, type Writable } from 'node:stream';
import { constants } from 'node:os';
import path from 'node:path';
import { sdkPythonPath } from '../../../model/paths.js';
import type { TerminalRequest, TerminalSession } from '../types.js';
import type { Container } from './container.js';
import { spawnIn } from './exec.js';

const HELPER = path.join(sdkPythonPath, 'svc', 'runtime', '_terminal.py');
const CONTROL_FD = 3;

export function terminalIn(container: Container, request: TerminalRequest, gpus: Readonly<Record<string, string>> = {}): TerminalSession {
  const argv = [
    container.unit.image.pythonPath,
    HELPER,
    '--rows',
    String(request.rows),
    '--cols',
    String(request.cols),
    '--control-fd',
    String(CONTROL_FD),
    '--',
    ...request.argv,
  ];
  const child = spawnIn(container, argv, { stdio: ['pipe', 'pipe', 'pipe', 'pipe'], env: { TERM: request.term }, gpus });
  // The program writes its errors to the terminal; the helper's own (a Python that cannot start it) join them.
  const output = new PassThrough();
  let open = 2;
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.pipe(output, { end: false });
    stream.once('end', () => --open === 0 && output.end());
  }
  const control = child.stdio[CONTROL_FD] as Writable;
  // The client may type or resize after the program ended: those writes go nowhere, quietly.
  for (const stream of [child.stdin!, control]) stream.on('error', () => {});
  const exited = new Promise<number>((resolve) => {
    child.once('error', () => resolve(127));
    // Killed by a signal: 128 + its number, as a shell says it (SIGTERM 143, SIGKILL 137).
    child.once('close', (code, signal) => resolve(code ?? 128 + (signal === null ? 1 : (constants.signals[signal] ?? 1))));
  });
  return {
    output,
    write: (data) => void child.stdin!.write(data),
    resize: (rows, cols) => void control.write(`${JSON.stringify({ rows, cols })}\n`),
    hangUp: () => {
      child.stdin!.end();
      child.kill('SIGHUP');
    },
    exited,
  };
}
