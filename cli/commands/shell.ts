/**
 * `svc shell <file>::<workload> | <app>/<workload> | --container <id> [-- command ...]`: a terminal inside a
 * container, as an owner of the workspace. With a file (or module) its code is uploaded and a new container
 * of the workload starts for the shell alone (its image, environment, secrets and volumes: a run of
 * kind shell, ended when the shell ends); with `<app>/<workload>` the same from its deployed version; with
 * `--container` the shell opens in a running container. Keys go to the container as typed (the local
 * terminal in raw mode), its output comes back as it is written, the window's size follows, and svc exits
 * with the program's exit code. The socket protocol is core/http/api/terminal-socket.ts's.
 */
import WebSocket from 'ws';
import { SvcError } from '../../core/model/errors.js';
import type { RunView } from '../../core/services/runs/types.js';
import { API_PREFIX, type ApiClient } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { parseDeployTarget } from '../names.js';
import { uploadCode } from './upload-code.js';
import { TERMINAL_SIZE } from '../../core/infra/scheduler/types.js';

export interface ShellFlags {
  /** A running container's id (`svc container list`), in place of a target. */
  readonly container?: string;
}

/** The local side of the terminal: the process's own, or a test's streams. */
export interface ShellTerminal {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  size(): { rows: number; cols: number };
  /** Calls back on each change of size; answers how to stop. */
  onResize(listener: () => void): () => void;
  /** Raw mode on a TTY (every key goes as typed, Ctrl-C included); answers how to restore it. */
  raw(): () => void;
  readonly term: string;
}

const POLL_MS = 500;

export async function shell(
  context: CommandContext,
  target: string | undefined,
  argv: readonly string[],
  flags: ShellFlags = {},
  terminal: ShellTerminal = processTerminal(),
): Promise<number> {
  if ((target === undefined) === (flags.container === undefined)) {
    throw new SvcError(
      'usage_invalid',
      'give either a workload (app.py::workload, or app/workload of a deployed app) or --container <id>.',
      {
        hint: 'svc shell app.py::predict, svc shell quickstart/greet, or svc shell --container c-1a2b3c4d5e (see svc container list).',
      },
    );
  }
  const { client, credentials } = await connect(context);
  let path: string;
  let end = async () => {};
  if (flags.container !== undefined) {
    path = `${API_PREFIX}/containers/${encodeURIComponent(flags.container)}/terminal`;
  } else {
    const run = await startShellRun(context, client, target!);
    path = `${API_PREFIX}/runs/${run.id}/terminal`;
    end = () => client.delete(`${API_PREFIX}/runs/${run.id}`).catch(() => {});
  }
  try {
    return await openTerminal(client, credentials.token, path, argv, terminal);
  } finally {
    await end();
  }
}

/** A new container of the workload for the shell: a run of kind shell, waited on until it runs. */
async function startShellRun(context: CommandContext, client: ApiClient, target: string): Promise<RunView> {
  const deployed = /^([a-z0-9-]+)\/([a-z0-9-]+)$/.exec(target);
  let body: Record<string, unknown>;
  if (deployed !== null) {
    body = { app: deployed[1], function: deployed[2], shell: true };
  } else {
    const { target: file, workload } = parseDeployTarget(target.replace('::', ':'));
    if (workload === null) {
      throw new SvcError('usage_invalid', `${target} names no workload: give it after :: (${target}::<workload>).`, {
        hint: 'svc shell app.py::predict opens a shell in a new container of predict.',
      });
    }
    const { manifest, bundle } = await uploadCode(context, client, file, (spec) => {
      if (!spec.workloads.some((w) => w.name === workload)) {
        throw new SvcError('usage_invalid', `the app ${spec.name} has no workload ${workload}.`, {
          hint: `Its workloads: ${spec.workloads.map((w) => w.name).join(', ') || '(none)'}.`,
        });
      }
    });
    body = {
      manifest: manifest.raw,
      bundle,
      function: workload,
      shell: true,
      ...(manifest.inlineSecrets === undefined ? {} : { inlineSecrets: manifest.inlineSecrets }),
    };
  }
  let { run } = await client.post<{ run: RunView }>(`${API_PREFIX}/runs`, body, { long: true });
  context.out.step(`starting a container of ${run.app}/${run.function} for the shell (${run.id})…`);
  while (run.status === 'building' || run.status === 'starting') {
    await context.sleep(POLL_MS);
    if (context.signal.aborted) break;
    ({ run } = await client.get<{ run: RunView }>(`${API_PREFIX}/runs/${run.id}`));
  }
  if (run.status !== 'ready') {
    await client.delete(`${API_PREFIX}/runs/${run.id}`).catch(() => {});
    throw run.failure === null
      ? new SvcError('client_closed', 'stopped before the container ran.')
      : new SvcError('container_failed', `the container of ${run.app}/${run.function} did not start: ${run.failure.message}`, {
          details: { code: run.failure.code },
        });
  }
  return run;
}

/** The terminal session until the program ends (its exit code) or the connection is lost. */
function openTerminal(
  client: ApiClient,
  token: string | undefined,
  path: string,
  argv: readonly string[],
  terminal: ShellTerminal,
): Promise<number> {
  const { rows, cols } = fitted(terminal.size());
  const query = new URLSearchParams({ rows: String(rows), cols: String(cols), term: terminal.term });
  for (const word of argv) query.append('command', word);
  const url = `${client.server.replace(/^http/, 'ws')}${path}?${query}`;
  const socket = new WebSocket(url, { headers: token === undefined ? {} : { Authorization: `Bearer ${token}` }, perMessageDeflate: false });
  return new Promise<number>((resolve, reject) => {
    let exitCode: number | null = null;
    let restore = () => {};
    let stopResizing = () => {};
    const type = (data: Buffer) => socket.readyState === WebSocket.OPEN && socket.send(data, { binary: true });
    const cleanUp = () => {
      terminal.input.off('data', type);
      terminal.input.pause();
      stopResizing();
      restore();
    };
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => reject(client.errorFrom(response.statusCode ?? 0, text, 'GET', path)));
    });
    socket.once('open', () => {
      restore = terminal.raw();
      terminal.input.on('data', type);
      terminal.input.resume();
      stopResizing = terminal.onResize(() => socket.send(JSON.stringify({ type: 'resize', ...fitted(terminal.size()) })));
    });
    socket.on('message', (data: Buffer, binary: boolean) => {
      if (binary) return void terminal.output.write(data);
      const message = JSON.parse(data.toString('utf8')) as { type?: string; exitCode?: number };
      if (message.type === 'exit' && typeof message.exitCode === 'number') exitCode = message.exitCode;
    });
    socket.once('error', (error) => {
      cleanUp();
      reject(client.unreachable(error));
    });
    socket.once('close', (code, reason) => {
      cleanUp();
      if (exitCode !== null) return resolve(exitCode);
      reject(
        new SvcError('server_unreachable', `the terminal closed before its program ended (${code}${reason.length ? `: ${reason}` : ''}).`),
      );
    });
  });
}

function processTerminal(): ShellTerminal {
  const { stdin, stdout } = process;
  return {
    input: stdin,
    output: stdout,
    size: () => ({ rows: stdout.rows || 24, cols: stdout.columns || 80 }),
    onResize: (listener) => {
      stdout.on('resize', listener);
      return () => stdout.off('resize', listener);
    },
    raw: () => {
      if (!stdin.isTTY) return () => {};
      stdin.setRawMode(true);
      return () => stdin.setRawMode(false);
    },
    term: process.env.TERM || 'xterm-256color',
  };
}

/** The server takes terminals of 1 to 1000 rows and columns: a larger window is told the largest, not refused. */
function fitted(size: { rows: number; cols: number }): { rows: number; cols: number } {
  const within = (n: number) => Math.min(TERMINAL_SIZE.max, Math.max(TERMINAL_SIZE.min, Math.floor(n) || TERMINAL_SIZE.min));
  return { rows: within(size.rows), cols: within(size.cols) };
}
