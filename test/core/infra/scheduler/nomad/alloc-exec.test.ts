import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { allocExec, allocTerminal } from '../../../../../core/infra/scheduler/nomad/alloc-exec.js';
import { NomadClient } from '../../../../../core/infra/scheduler/nomad/client.js';

/**
 * svc's side of Nomad's allocation exec WebSocket, against a server that speaks its frames as Nomad 1.11.3
 * does (test/cluster/containers.test.ts runs the real agent): the command Nomad is asked to run, a terminal
 * whose session breaks off (it says why, as its last line, and ends as hung up), and an exec's exit code.
 */
describe('Nomad allocation exec (alloc-exec.ts)', () => {
  let http: Server;
  let sockets: WebSocketServer;
  let client: NomadClient;
  let behave: (socket: WebSocket, url: URL) => void = () => {};
  const asked: URL[] = [];

  before(async () => {
    http = createServer();
    sockets = new WebSocketServer({ server: http });
    sockets.on('connection', (socket, request) => {
      const url = new URL(request.url ?? '/', 'http://nomad');
      asked.push(url);
      behave(socket, url);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    client = new NomadClient({ url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, token: 'secret', namespace: 'svc' });
  });
  after(async () => {
    sockets.close();
    await new Promise((resolve) => http.close(resolve));
  });

  it("asks for the command through /bin/sh alone, TERM set by the shell, and reports the program's output and exit", async () => {
    behave = (socket) =>
      socket.once('message', () => {
        socket.send(JSON.stringify({ stdout: { data: Buffer.from('hello\r\n').toString('base64') } }));
        socket.send(JSON.stringify({ exited: true, result: { exit_code: 7 } }));
      });
    const session = allocTerminal(
      client,
      { allocId: 'a1', task: 'runtime' },
      { argv: ['top'], rows: 24, cols: 80, term: 'xterm-256color' },
    );
    let shown = '';
    session.output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    assert.equal(await session.exited, 7);
    assert.equal(shown, 'hello\r\n');
    const url = asked.at(-1)!;
    assert.equal(url.pathname, '/v1/client/allocation/a1/exec');
    assert.equal(url.searchParams.get('tty'), 'true');
    const command = JSON.parse(url.searchParams.get('command')!) as string[];
    assert.deepEqual(command.slice(0, 2), ['/bin/sh', '-c'], 'nothing but /bin/sh is needed in the task');
    assert.match(command[2]!, /^export TERM=xterm-256color; /);
    assert.deepEqual(command.slice(3), ['sh', 'top']);
  });

  it('ends a terminal whose session Nomad breaks off as hung up (129), its last line saying why', async () => {
    behave = (socket) => socket.once('message', () => socket.terminate());
    const session = allocTerminal(client, { allocId: 'a2', task: 'runtime' }, { argv: [], rows: 24, cols: 80, term: 'xterm' });
    let shown = '';
    session.output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    assert.equal(await session.exited, 129);
    await new Promise((resolve) => setImmediate(resolve));
    assert.match(shown, /\r\nsvc: Nomad ended the exec into a2 before the command did \(1006\)\.\r\n$/);
  });

  it('runs an exec without a terminal to its exit code, with its two streams apart', async () => {
    behave = (socket) =>
      socket.on('message', (data: Buffer) => {
        if (!(JSON.parse(data.toString()) as { stdin?: { close?: boolean } }).stdin?.close) return;
        socket.send(JSON.stringify({ stdout: { data: Buffer.from('out').toString('base64') } }));
        socket.send(JSON.stringify({ stderr: { data: Buffer.from('err').toString('base64') } }));
        socket.send(JSON.stringify({ exited: true, result: { exit_code: 3 } }));
      });
    const outcome = await allocExec(client, { allocId: 'a3', task: 'runtime' }, { argv: ['ps'], timeoutMs: 10_000 });
    assert.deepEqual([outcome.exitCode, outcome.stdout, outcome.stderr, outcome.timedOut], [3, 'out', 'err', false]);
    assert.equal(asked.at(-1)!.searchParams.get('tty'), 'false');
    assert.deepEqual((JSON.parse(asked.at(-1)!.searchParams.get('command')!) as string[]).slice(3), ['sh', 'ps']);
  });
});
