/**
 * `svc container exec` and `svc shell` on Nomad: a command in a running allocation's task through Nomad's
 * exec WebSocket (`GET /v1/client/allocation/:id/exec?task=&command=<JSON argv>&tty=`), as `nomad alloc
 * exec` does. Nomad's frames are JSON both ways: in, `{"stdin": {"data": <base64>}}`, `{"stdin": {"close":
 * true}}` and, with a terminal only, `{"tty_size": {"height", "width"}}` (sent without one, it blocks
 * Nomad's input forwarding, so the command never reports its exit); out, `{"stdout"|"stderr": {"data"}}`
 * and `{"exited": true, "result": {"exit_code"}}`. An empty frame every 10 s keeps the session alive.
 *
 * The command runs in the task's environment (its secrets too) and, when the task's folder has it, in its
 * code's folder (`local/app`, jobs/task.ts). On Nomad's `exec` driver the command runs in the task's chroot,
 * which must have `/bin/sh` (Nomad's default `chroot_env` does): without it Nomad 1.11.3 fails a terminal at
 * once but leaves an exec without one waiting until its time-out; a missing command is the shell's 127.
 * `raw_exec` runs the command beside the task.
 */
import { PassThrough } from 'node:stream';
import type WebSocket from 'ws';
import { SvcError } from '../../../model/errors.js';
import type { ExecOutcome, ExecRequest, TerminalRequest, TerminalSession } from '../types.js';
import type { NomadClient } from './client.js';
import { ExecOutput } from '../exec-output.js';

const HEARTBEAT_MS = 10_000;
/** Into the code's folder when the task has one, then the command; without one, the task's shell. */
const IN_CODE_FOLDER =
  'cd "${NOMAD_TASK_DIR:-local}/app" 2>/dev/null; if [ "$#" -eq 0 ]; then command -v bash >/dev/null && exec bash; exec sh; fi; exec "$@"';

interface ExecStream {
  readonly socket: WebSocket;
  /** Settles with the exit code once Nomad reports it; rejects when the socket ends without one. */
  readonly exited: Promise<number>;
  send(frame: object): void;
}

/** What the allocation's task is to run; `where` names it in errors. */
export interface ExecTarget {
  readonly allocId: string;
  readonly task: string;
}

function openExec(
  client: NomadClient,
  target: ExecTarget,
  argv: readonly string[],
  term: string | null,
  onOutput: (stream: 'stdout' | 'stderr', data: Buffer) => void,
): ExecStream {
  const tty = term !== null;
  // A terminal's programs draw for the client's terminal: its TERM (checked by the API: letters, digits, ._+-),
  // set by the shell itself, so that a task's root needs nothing but /bin/sh.
  const script = `${tty ? `export TERM=${term}; ` : ''}${IN_CODE_FOLDER}`;
  const command = JSON.stringify(['/bin/sh', '-c', script, 'sh', ...argv]);
  const socket = client.socket(`/v1/client/allocation/${encodeURIComponent(target.allocId)}/exec`, { task: target.task, command, tty });
  const queued: string[] = [];
  const send = (frame: object) => {
    const text = JSON.stringify(frame);
    if (socket.readyState === socket.OPEN) socket.send(text);
    else if (socket.readyState === socket.CONNECTING) queued.push(text);
  };
  const heartbeat = setInterval(() => send({}), HEARTBEAT_MS).unref();
  const exited = new Promise<number>((resolve, reject) => {
    let code: number | null = null;
    socket.on('open', () => {
      for (const text of queued.splice(0)) socket.send(text);
    });
    socket.on('message', (data: Buffer) => {
      let frame: { stdout?: { data?: string }; stderr?: { data?: string }; exited?: boolean; result?: { exit_code?: number } };
      try {
        frame = JSON.parse(data.toString('utf8')) as typeof frame;
      } catch {
        // Not Nomad's exec protocol: end the exec (a throw here would leave the emitter, and end svc).
        reject(new SvcError('bad_request', `Nomad's exec into ${target.allocId} sent a frame that is not JSON.`));
        socket.terminate();
        return;
      }
      if (frame.stdout?.data) onOutput('stdout', Buffer.from(frame.stdout.data, 'base64'));
      if (frame.stderr?.data) onOutput('stderr', Buffer.from(frame.stderr.data, 'base64'));
      if (frame.exited) {
        code = frame.result?.exit_code ?? 0;
        socket.close(1000);
      }
    });
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      response.on('end', () => {
        reject(new SvcError('bad_request', `Nomad refused the exec into ${target.allocId}: ${response.statusCode} ${text.trim()}`));
        socket.terminate(); // ws keeps a refused handshake open while someone listens for it: end it, and its heartbeat
      });
    });
    socket.once('error', (error) =>
      reject(new SvcError('scheduler_unreachable', `the exec into ${target.allocId} failed: ${error.message}`)),
    );
    socket.once('close', (closeCode, reason) => {
      clearInterval(heartbeat);
      if (code !== null) return resolve(code);
      reject(
        new SvcError(
          'scheduler_unreachable',
          `Nomad ended the exec into ${target.allocId} before the command did (${closeCode}${reason.length ? `: ${reason}` : ''}).`,
        ),
      );
    });
  });
  exited.catch(() => {});
  return { socket, exited, send };
}

/** Runs `request.argv` to its end (or its time-out) and answers what it wrote, each stream up to the bound. */
export async function allocExec(client: NomadClient, target: ExecTarget, request: ExecRequest): Promise<ExecOutcome> {
  const out = new ExecOutput();
  const stream = openExec(client, target, request.argv, null, (name, data) => out.add(name, data));
  stream.send({ stdin: { close: true } });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stream.socket.terminate(); // Nomad ends the command with its session
  }, request.timeoutMs);
  let exitCode: number | null = null;
  try {
    exitCode = await stream.exited;
  } catch (error) {
    if (!timedOut) throw error;
  } finally {
    clearTimeout(timer);
  }
  return out.outcome(exitCode, timedOut ? 'SIGKILL' : null, timedOut);
}

/** A program on a terminal Nomad opens in the task (`tty=true`): keys, sizes and the exit pass through. */
export function allocTerminal(client: NomadClient, target: ExecTarget, request: TerminalRequest): TerminalSession {
  const output = new PassThrough();
  // A slow client pauses the output (terminal-socket.ts): Nomad's frames wait in its socket, not in svc's memory.
  const stream = openExec(client, target, request.argv, request.term, (_name, data) => {
    if (!output.write(data)) stream.socket.pause();
  });
  output.on('drain', () => stream.socket.resume());
  stream.send({ tty_size: { height: request.rows, width: request.cols } });
  const exited = stream.exited.then(
    (code) => code,
    (error: Error) => {
      // The session broke off (the program was hung up): the terminal says why, as the last thing it shows.
      output.write(`\r\nsvc: ${error.message}\r\n`);
      return 129;
    },
  );
  void exited.then(() => output.end());
  return {
    output,
    write: (data) => stream.send({ stdin: { data: data.toString('base64') } }),
    resize: (rows, cols) => stream.send({ tty_size: { height: rows, width: cols } }),
    hangUp: () => {
      stream.send({ stdin: { close: true } });
      stream.socket.close(1000);
    },
    exited,
  };
}
