/**
 * `svc shell`: a terminal inside a container over a WebSocket, `GET /api/v1/containers/<id>/terminal` (a
 * running container of a deployment) or `GET /api/v1/runs/<id>/terminal` (the container of a run, such as
 * the one `svc shell app.py::workload` starts). The same token and workspace rules as the API, owners only,
 * each session recorded in the deployment's (or run's) log: who, when, which container, what program.
 *
 * Query: `command` (repeated, the argv; none: the container's shell), `rows` and `cols` (the size, 24×80
 * by default), `term` (the client's TERM). Frames: binary both ways are the terminal's bytes; the client's
 * text frames are `{"type": "resize", "rows", "cols"}`; when the program ends the server sends
 * `{"type": "exit", "exitCode"}` and closes (1000). The client closing hangs the program up (SIGHUP).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { SvcError, toSvcError } from '../../model/errors.js';
import type { DeploymentLogKey } from '../../infra/logs/deployment-logs.js';
import type { TerminalRequest, TerminalSession } from '../../infra/scheduler/types.js';
import { writeRawError } from '../../traffic/gateway/raw-error.js';
import { RUN_ID_SOURCE } from '../../services/runs/types.js';
import { apiPrincipal } from './authenticate.js';
import { requireContainer } from './containers.js';
import { roleOf } from './role.js';
import type { ApiServices } from './types.js';
import { COMMAND_WORDS, TERMINAL_SIZE } from '../../infra/scheduler/types.js';

const PATH = new RegExp(`^/api/v1/(containers/([A-Za-z0-9._-]{1,128})|runs/(${RUN_ID_SOURCE}))/terminal$`);
const SIZE = TERMINAL_SIZE;
const TERM = /^[A-Za-z0-9._+-]{1,64}$/;
/** Output waiting to reach a slow client: past it the program's output is paused (it blocks, as on a slow terminal). */
const HIGH_WATER_BYTES = 1024 * 1024;
const PING_INTERVAL_MS = 30_000;

/** Where one session runs and is recorded. */
interface Target {
  readonly unitKey: string;
  readonly containerId: string;
  readonly logKey: DeploymentLogKey;
  /** Given back when the session ends (a run's hold, so that it does not idle meanwhile). */
  readonly release: () => void;
}

type TerminalServices = Pick<ApiServices, 'plugins' | 'controlPlane' | 'deployments' | 'autoscaler' | 'containers' | 'runs' | 'logs'>;

export interface TerminalSockets {
  /** Whether the upgrade is for a terminal (else it is a workload's WebSocket). */
  handles(request: IncomingMessage): boolean;
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}

export function createTerminalSockets(services: TerminalServices): TerminalSockets {
  // Keystrokes, pastes and sizes: a message of 1 MiB is far past any of them (larger ones close with 1009).
  const server = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1024 * 1024 });
  const open = new Set<WebSocket>();

  async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://svc');
    const principal = await apiPrincipal(services.plugins, request.headers, url);
    if ((await roleOf(principal, services.controlPlane.accounts)) !== 'owner') {
      throw new SvcError('forbidden', 'terminals in containers are for owners of the workspace.', {
        hint: 'Ask an owner of the workspace, who sees everything a container holds (its secrets too).',
      });
    }
    const wanted = terminalRequest(url.searchParams);
    const target = targetOf(services, principal.workspace, PATH.exec(url.pathname)!);
    let session: TerminalSession;
    try {
      if (services.containers.terminal === undefined) {
        throw new SvcError('bad_request', 'this scheduler cannot open terminals in containers.');
      }
      session = services.containers.terminal(target.unitKey, target.containerId, wanted);
    } catch (error) {
      target.release();
      throw error;
    }
    services.logs.add(target.logKey, {
      time: new Date().toISOString(),
      container: target.containerId,
      stream: 'system',
      text: `terminal by ${principal.subject}: ${wanted.argv.length === 0 ? 'a shell' : JSON.stringify(wanted.argv)}`,
    });
    let upgraded = false;
    server.handleUpgrade(request, socket, head, (client) => {
      upgraded = true;
      open.add(client);
      client.once('close', () => open.delete(client));
      relay(client, session, target);
    });
    // ws answered a malformed handshake itself: nobody will use the program.
    if (!upgraded) {
      session.hangUp();
      target.release();
    }
  }

  return {
    handles: (request) => PATH.test(new URL(request.url ?? '/', 'http://svc').pathname),
    handleUpgrade(request, socket, head) {
      socket.on('error', () => socket.destroy());
      upgrade(request, socket, head).catch((thrown: unknown) => writeRawError(socket, toSvcError(thrown)));
    },
    close() {
      for (const client of open) client.close(1001, 'svc is stopping');
      server.close();
    },
  };
}

/** The container the path names, in the caller's workspace: a deployment's, or a run's first running one. */
function targetOf(services: TerminalServices, workspace: string, path: RegExpExecArray): Target {
  const [, , containerId, runId] = path;
  if (containerId !== undefined) {
    const { deployment, workload, view } = requireContainer(services as ApiServices, workspace, containerId);
    return { unitKey: workload.unit!, containerId: view.id, logKey: { ...deployment.ref, workload: workload.name }, release: () => {} };
  }
  let sessions = 1;
  const hold = services.runs.attach(workspace, runId!, () => sessions > 0);
  const running = services.containers.status(hold.unitKey).find((c) => c.state === 'healthy');
  if (running === undefined) {
    hold.release();
    throw new SvcError('conflict', `run ${runId} has no running container yet.`, {
      hint: 'Wait until GET /api/v1/runs/<id> says "ready", then open the terminal.',
    });
  }
  return {
    unitKey: hold.unitKey,
    containerId: running.id,
    logKey: hold.logKey,
    release: () => {
      sessions = 0;
      hold.release();
    },
  };
}

/** The program and the terminal the query asks for; `bad_request` naming the parameter otherwise. */
export function terminalRequest(query: URLSearchParams): TerminalRequest {
  const argv = query.getAll('command');
  // As exec's body takes them (containers.ts): an empty word is a word (sh -c '').
  if (argv.length > COMMAND_WORDS.max || argv.some((arg) => arg.length > COMMAND_WORDS.maxChars || arg.includes('\0'))) {
    throw new SvcError(
      'bad_request',
      `command takes at most ${COMMAND_WORDS.max} words of at most ${COMMAND_WORDS.maxChars} characters each, none with a NUL.`,
      {
        details: { field: 'command' },
      },
    );
  }
  const size = (name: 'rows' | 'cols', fallback: number): number => {
    const text = query.get(name);
    if (text === null) return fallback;
    const value = Number(text);
    if (!/^\d{1,4}$/.test(text) || value < SIZE.min || value > SIZE.max) {
      throw new SvcError('bad_request', `${name}=${JSON.stringify(text)} is not a terminal size from ${SIZE.min} to ${SIZE.max}.`, {
        details: { field: name },
      });
    }
    return value;
  };
  const term = query.get('term') ?? 'xterm-256color';
  if (!TERM.test(term)) {
    throw new SvcError('bad_request', `term=${JSON.stringify(term)} is not a terminal type such as xterm-256color.`, {
      details: { field: 'term' },
    });
  }
  return { argv, rows: size('rows', 24), cols: size('cols', 80), term };
}

/** Bytes both ways, sizes in, the exit out; either side ending ends the other. */
function relay(client: WebSocket, session: TerminalSession, target: Target): void {
  // A frame that breaks RFC 6455 is an 'error' (then the close below): with no listener it would end svc.
  client.on('error', () => client.terminate());
  const output = session.output;
  output.on('data', (chunk: Buffer) => {
    client.send(chunk, { binary: true }, () => {
      if (client.bufferedAmount < HIGH_WATER_BYTES && output.isPaused()) output.resume();
    });
    if (client.bufferedAmount >= HIGH_WATER_BYTES) output.pause();
  });
  client.on('message', (data: RawData, binary: boolean) => {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]);
    if (binary) return session.write(bytes);
    const size = resizeOf(bytes.toString('utf8'));
    if (size === null) return client.close(1008, 'text frames are {"type": "resize", "rows", "cols"}');
    session.resize(size.rows, size.cols);
  });
  const ping = setInterval(() => client.ping(), PING_INTERVAL_MS).unref();
  client.once('close', () => {
    clearInterval(ping);
    session.hangUp();
    target.release();
  });
  // The program ended: what it wrote last goes out first, then how it ended.
  void Promise.all([session.exited, new Promise((resolve) => output.once('end', resolve))]).then(([exitCode]) => {
    if (client.readyState !== client.OPEN) return;
    client.send(JSON.stringify({ type: 'exit', exitCode }));
    client.close(1000, 'the program ended');
  });
}

function resizeOf(text: string): { rows: number; cols: number } | null {
  try {
    const message = JSON.parse(text) as { type?: unknown; rows?: unknown; cols?: unknown };
    const { rows, cols } = message;
    const fits = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= SIZE.min && (n as number) <= SIZE.max;
    return message.type === 'resize' && fits(rows) && fits(cols) ? { rows, cols } : null;
  } catch {
    return null;
  }
}
