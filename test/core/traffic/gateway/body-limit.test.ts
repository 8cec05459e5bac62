import assert from 'node:assert/strict';
import http from 'node:http';
import { DEFAULT_MAX_BODY_BYTES } from '../../../../core/traffic/gateway/app.js';
import { type Harness, parseAnswer, PREFIX, rawRequest, startHarness, wait } from './harness.js';

const LIMIT = 1024;

/** A stand-in container that reads the whole body and answers its length; records whether the body arrived complete. */
function countingContainer(outcomes: string[]): http.RequestListener {
  return (req, res) => {
    let length = 0;
    req.on('data', (chunk: Buffer) => (length += chunk.length));
    req.on('end', () => {
      outcomes.push(`complete ${length}`);
      res.setHeader('content-type', 'application/json').end(JSON.stringify({ length }));
    });
    req.on('aborted', () => outcomes.push(`aborted after ${length}`));
  };
}

/** Sends a chunked body piece by piece, reading the answer as soon as it comes. */
function chunkedPost(url: string, chunks: number, chunkSize: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = http.request(url, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (response) => {
      answered = true;
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', (error) => (answered ? undefined : reject(error)));
    let sent = 0;
    const next = () => {
      if (answered) return; // like curl: stop sending once an early answer arrived
      if (sent === chunks) return void request.end();
      sent += 1;
      request.write('x'.repeat(chunkSize), () => setTimeout(next, 5));
    };
    next();
  });
}

describe('gateway: request body limit', () => {
  let harness: Harness;
  const outcomes: string[] = [];
  beforeEach(async () => {
    outcomes.length = 0;
    harness = await startHarness({ container: countingContainer(outcomes), maxBodyBytes: LIMIT });
  });
  afterEach(async () => harness.close());

  it('defaults to 32 MiB', () => {
    assert.equal(DEFAULT_MAX_BODY_BYTES, 32 * 1024 * 1024);
  });

  it('answers 413 payload_too_large for a Content-Length above the limit, at once and without contacting the container', async () => {
    // Headers only: the gateway must not wait for (or read) the body it refuses.
    const raw = await rawRequest(harness.port, `POST ${PREFIX}/ HTTP/1.1\r\nHost: localhost\r\nContent-Length: 300000000\r\n\r\n`);
    const answer = parseAnswer(raw);
    assert.equal(answer.status, 413);
    assert.equal(JSON.parse(answer.body).error.code, 'payload_too_large');
    assert.equal(harness.seen.length, 0);
    assert.deepEqual(harness.reports, []);
  });

  it('forwards a body of exactly the limit', async () => {
    const response = await fetch(`${harness.url}${PREFIX}/`, { method: 'POST', body: 'x'.repeat(LIMIT) });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { length: LIMIT });
  });

  it('forwards a chunked body under the limit', async () => {
    const answer = await chunkedPost(`${harness.url}${PREFIX}/`, 4, 200);
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), { length: 800 });
  });

  it('keeps reading a refused body for a while, so that a client still sending sees the 413', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    async function* body() {
      for (let i = 0; i < 40; i++) yield chunk;
    }
    // fetch writes the whole body before it looks at the answer: closing at once would fail it with EPIPE.
    const response = await fetch(`${harness.url}${PREFIX}/`, { method: 'POST', body: body(), duplex: 'half' } as RequestInit);
    assert.equal(response.status, 413);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'payload_too_large');
  });

  it('aborts the upstream request and answers 413 once a chunked body passes the limit', async () => {
    const answer = await chunkedPost(`${harness.url}${PREFIX}/`, 20, 200);
    assert.equal(answer.status, 413);
    assert.equal(JSON.parse(answer.body).error.code, 'payload_too_large');
    await wait(100);
    assert.equal(outcomes.length, 1);
    assert.match(outcomes[0]!, /^aborted after \d+$/);
    assert.ok(Number(outcomes[0]!.split(' ').pop()) <= LIMIT, 'no byte past the limit reaches the container');
    assert.deepEqual(harness.reports, []);
  });
});
