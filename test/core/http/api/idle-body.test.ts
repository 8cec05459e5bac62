/**
 * A streamed body's pauses are bounded, its whole time is not: a real HTTP server reads bodies with
 * cutOffWhenIdle at 300 ms, and real clients send one slowly (longer than the bound, in small steps), one
 * that stops, and one whose answer takes longer than the bound once the body is in.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { cutOffWhenIdle } from '../../../../core/http/api/idle-body.js';
import { SvcError } from '../../../../core/model/errors.js';
import { answerClientError } from '../../../../core/traffic/gateway/http-server.js';

const IDLE_MS = 300;

describe('cutOffWhenIdle: a streamed body may be slow, not stopped', function () {
  this.timeout(20_000);
  let server: http.Server;
  let url: string;
  /** What the handler saw of each body: its bytes, or the error it failed with. */
  const seen: { bytes: number; error: unknown }[] = [];

  before(async () => {
    server = http.createServer(async (req, res) => {
      cutOffWhenIdle(req, IDLE_MS);
      let bytes = 0;
      try {
        for await (const chunk of req as AsyncIterable<Buffer>) bytes += chunk.length;
      } catch (error) {
        seen.push({ bytes, error });
        return;
      }
      seen.push({ bytes, error: null });
      if (req.url === '/slow-answer') await sleep(3 * IDLE_MS); // the answer, once the body is in, is not bounded
      res.end(String(bytes));
    });
    server.requestTimeout = 0;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  /** Sends `steps` pieces of 1 KiB, `pauseMs` apart (then, with `stop`, nothing more); the answer's text, or the error. */
  function send(path: string, steps: number, pauseMs: number, stop = false): Promise<string | Error> {
    return new Promise((resolve) => {
      const request = http.request(`${url}${path}`, { method: 'PUT', headers: { 'Transfer-Encoding': 'chunked' } }, (answer) => {
        let text = '';
        answer.on('data', (chunk: Buffer) => (text += chunk.toString()));
        answer.on('end', () => resolve(text));
      });
      request.on('error', resolve);
      void (async () => {
        for (let i = 0; i < steps; i++) {
          request.write(Buffer.alloc(1024));
          await sleep(pauseMs);
        }
        if (!stop) request.end();
      })();
    });
  }

  it('takes a body slower than the bound in all, with shorter pauses', async () => {
    assert.equal(await send('/slow', 12, IDLE_MS / 3), String(12 * 1024)); // 1.2 s in all, 100 ms pauses
    assert.deepEqual(seen.at(-1), { bytes: 12 * 1024, error: null });
  });

  it('cuts off a body that stops sending, with client_closed', async () => {
    const answer = await send('/stops', 2, 10, true);
    assert.ok(answer instanceof Error, 'the connection is closed');
    const last = seen.at(-1)!;
    assert.equal(last.bytes, 2 * 1024);
    assert.ok(last.error instanceof SvcError && last.error.code === 'client_closed', String(last.error));
    assert.match((last.error as SvcError).message, /sent nothing for 0.3 s, and was cut off/);
  });

  it('leaves the answer unbounded once the body is in', async () => {
    assert.equal(await send('/slow-answer', 1, 0), '1024');
  });
});

describe("a request's headers stay bounded in time", function () {
  this.timeout(20_000);

  it('answers headers that stop coming with 400 saying so, not "not valid HTTP"', async () => {
    const server = http.createServer({ connectionsCheckingInterval: 100 }, () => assert.fail('no request may reach the handler'));
    server.headersTimeout = 300;
    server.requestTimeout = 0; // as svc's listeners: the headers' own bound still holds
    server.on('clientError', answerClientError);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.write('PUT /x HTTP/1.1\r\nHost: x\r\n'); // and nothing more
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      await new Promise((resolve) => socket.once('close', resolve));
      assert.match(answer, /^HTTP\/1\.1 400 /);
      assert.match(answer, /the request's headers did not all arrive in time/);
    } finally {
      server.close();
    }
  });
});
