/**
 * The log streams of `svc serve --server` (cli/serve/log-streams.ts) against
 * a real HTTP server that answers Server-Sent Events as svc's log routes do,
 * read by the real ApiClient: one stream per workload, opened and closed as
 * the set changes, opened again when it drops (without printing a line
 * twice), dropped when the workload is gone.
 */
import assert from 'node:assert/strict';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../../cli/api-client.js';
import { LogStreams, PrintedLines, type LogStream } from '../../cli/serve/log-streams.js';
import type { DeploymentLogLine } from '../../core/infra/logs/types.js';
import { until } from '../helpers/until.js';

/** Serves `/logs/<workload>` as svc does: the kept lines, then each new one; `missing` answers 404. */
class LogServer {
  readonly kept = new Map<string, DeploymentLogLine[]>();
  readonly open = new Map<string, Set<ServerResponse>>();
  readonly connections = new Map<string, number>();
  /** Workloads a reload deleted: their streams ended with `end: deleted`, and they answer 404 from then on. */
  readonly deleted = new Set<string>();
  readonly #server = http.createServer((request, response) => {
    const workload = decodeURIComponent(request.url!.replace(/^\/logs\//, ''));
    if (workload === 'missing' || this.deleted.has(workload)) {
      response.writeHead(404, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 'not_found', message: 'the preview of app has no workload missing.' } }));
      return;
    }
    assert.equal(request.headers.accept, 'text/event-stream');
    this.connections.set(workload, (this.connections.get(workload) ?? 0) + 1);
    response.writeHead(200, { 'Content-Type': 'text/event-stream' });
    for (const line of this.kept.get(workload) ?? []) response.write(event(line));
    const open = this.open.get(workload) ?? new Set();
    this.open.set(workload, open);
    open.add(response);
    request.on('close', () => open.delete(response));
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  emit(workload: string, text: string, time = new Date().toISOString()): void {
    const line: DeploymentLogLine = { time, container: 'c-1', stream: 'stdout', text };
    this.kept.set(workload, [...(this.kept.get(workload) ?? []), line]);
    for (const response of this.open.get(workload) ?? []) response.write(event(line));
  }

  /** Ends the open streams of a workload as a dropped connection would (no `event: end`). */
  drop(workload: string): void {
    for (const response of this.open.get(workload) ?? []) response.destroy();
  }

  /** A reload removed the workload: its streams end as svc ends them, and it is gone. */
  delete(workload: string): void {
    this.deleted.add(workload);
    for (const response of this.open.get(workload) ?? []) response.end('event: end\ndata: {"reason":"deleted"}\n\n');
  }

  openCount(workload: string): number {
    return this.open.get(workload)?.size ?? 0;
  }
}

const event = (line: DeploymentLogLine) => `event: log\ndata: ${JSON.stringify(line)}\n\n`;

describe('svc serve --server: log streams', () => {
  let server: LogServer;
  let streams: LogStreams;
  let printed: string[];
  let warnings: string[];
  const stream = (workload: string): LogStream => ({ key: `app/${workload}`, label: workload, path: `/logs/${workload}` });

  beforeEach(async () => {
    server = new LogServer();
    await server.start();
    printed = [];
    warnings = [];
    streams = new LogStreams({
      client: new ApiClient({ server: server.url }),
      print: (label, line) => printed.push(`${label}: ${line.text}`),
      warn: (message) => warnings.push(message),
      retryMs: 1,
    });
  });

  afterEach(async () => {
    await streams.close();
    await server.stop();
  });

  it('follows one stream per workload, and prints each line with its workload', async () => {
    server.emit('hello', 'kept before');
    streams.sync([stream('hello'), stream('greet')]);
    await until('both streams are open', () => server.openCount('hello') === 1 && server.openCount('greet') === 1);
    server.emit('greet', 'said hi');
    server.emit('hello', 'said hello');
    await until('three lines', () => printed.length === 3);
    assert.deepEqual(printed.sort(), ['greet: said hi', 'hello: kept before', 'hello: said hello']);
    assert.deepEqual(streams.keys.sort(), ['app/greet', 'app/hello']);
  });

  it('opens the stream of an added workload and closes the stream of a removed one', async () => {
    streams.sync([stream('hello'), stream('extra')]);
    await until('both streams are open', () => server.openCount('hello') === 1 && server.openCount('extra') === 1);
    streams.sync([stream('hello'), stream('added')]);
    await until('extra closed, added open', () => server.openCount('extra') === 0 && server.openCount('added') === 1);
    assert.deepEqual(streams.keys.sort(), ['app/added', 'app/hello']);
    assert.equal(server.connections.get('hello'), 1, 'the stream of a workload that stays is left open');
    server.emit('extra', 'nobody reads this');
    server.emit('added', 'new workload');
    await until("the added workload's line", () => printed.includes('added: new workload'));
    assert.ok(!printed.includes('extra: nobody reads this'));
    assert.deepEqual(warnings, []);
  });

  it('opens a dropped stream again, without printing the kept lines twice', async () => {
    const time = new Date().toISOString();
    server.emit('hello', 'one', time);
    server.emit('hello', 'one', time);
    streams.sync([stream('hello')]);
    await until('the kept lines', () => printed.length === 2);
    server.drop('hello');
    await until('the stream is open again', () => (server.connections.get('hello') ?? 0) === 2 && server.openCount('hello') === 1);
    server.emit('hello', 'one', time);
    server.emit('hello', 'two');
    await until('the new line', () => printed.includes('hello: two'));
    assert.deepEqual(printed, ['hello: one', 'hello: one', 'hello: one', 'hello: two']);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /^hello: lost its log stream .*; opening it again$/);
    assert.equal(warnings[1], 'hello: following its logs again');
  });

  it('stops following a workload the server no longer has', async () => {
    streams.sync([stream('missing'), stream('hello')]);
    await until('the missing workload is dropped', () => streams.keys.length === 1);
    assert.deepEqual(streams.keys, ['app/hello']);
    assert.deepEqual(warnings, ['missing: the preview of app has no workload missing. Stopped following its logs.']);
  });

  it("says nothing when a workload the server deleted is gone before the reload's answer closes its stream", async () => {
    streams.sync([stream('hello'), stream('extra')]);
    await until('both streams are open', () => server.openCount('hello') === 1 && server.openCount('extra') === 1);
    server.delete('extra');
    await until('the deleted workload is dropped', () => streams.keys.length === 1);
    assert.equal(server.connections.get('extra'), 1, 'the 404 did not count as a connection');
    assert.deepEqual(warnings, []);
  });

  it('closes every stream on close, and opens none after', async () => {
    streams.sync([stream('hello'), stream('greet')]);
    await until('both streams are open', () => server.openCount('hello') === 1 && server.openCount('greet') === 1);
    await streams.close();
    await until('both streams are closed', () => server.openCount('hello') === 0 && server.openCount('greet') === 0);
    streams.sync([stream('later')]);
    assert.deepEqual(streams.keys, []);
  });
});

describe('svc serve --server: lines printed once across reconnections', () => {
  const line = (time: string, text: string): DeploymentLogLine => ({ time, container: 'c-1', stream: 'stdout', text });

  it('skips the replayed lines up to the last printed, and prints what follows', () => {
    const printed = new PrintedLines();
    const first = [line('2030-01-01T00:00:00.000Z', 'a'), line('2030-01-01T00:00:01.000Z', 'b'), line('2030-01-01T00:00:01.000Z', 'b')];
    assert.deepEqual(
      first.map((l) => printed.isNew(l)),
      [true, true, true],
    );
    printed.replay();
    const again = [...first, line('2030-01-01T00:00:01.000Z', 'b'), line('2030-01-01T00:00:02.000Z', 'c')];
    assert.deepEqual(
      again.map((l) => printed.isNew(l)),
      [false, false, false, true, true],
    );
  });
});
