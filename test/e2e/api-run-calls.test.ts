import assert from 'node:assert/strict';
import http from 'node:http';
import type { Platform } from '../../core/platform/platform.js';
import { rawCallRunId } from '../../core/http/api/call-route.js';
import { tokenFor } from '../core/http/api/platform.js';
import { testConfig } from '../helpers/config.js';
import { until } from '../helpers/until.js';
import { pickledCall, readyRun, startRunPlatform, type RunPlatform } from './run-helpers.js';

interface Sent {
  readonly method?: string;
  readonly token?: string | null;
  readonly headers?: Record<string, string>;
  readonly body?: Buffer | string;
  /** Sent without a Content-Length (chunked), as a client streaming its call does. */
  readonly chunked?: boolean;
}

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One request over a new connection, with exactly these headers (node:http: a Host of our choosing too). */
function send(url: string, target: string, sent: Sent, token: string): Promise<Answer> {
  const { hostname, port } = new URL(url);
  const body = sent.body === undefined ? undefined : Buffer.from(sent.body);
  const headers: Record<string, string> = { 'content-type': 'application/vnd.svc.call+pickle', ...sent.headers };
  if (sent.token !== null) headers.authorization = `Bearer ${sent.token ?? token}`;
  if (body !== undefined && !sent.chunked) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const request = http.request({ hostname, port, path: target, method: sent.method ?? 'POST', headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString() }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** What must be alike on both paths: everything but the date and a request id the server made up. */
function comparable(answer: Answer, keepRequestId: boolean): Answer {
  const { date: _date, 'x-request-id': requestId, ...headers } = answer.headers;
  assert.ok(typeof requestId === 'string' && requestId !== '', 'every answer says its request id');
  return { status: answer.status, headers: keepRequestId ? { ...headers, 'x-request-id': requestId } : headers, body: answer.body };
}

/** The run id with its first hex digit percent-encoded: Koa's router decodes it to the same id, the raw path does not take it. */
function koaForm(runId: string): string {
  const digit = runId.charAt(4);
  return `run-%${digit.charCodeAt(0).toString(16)}${runId.slice(5)}`;
}

/**
 * `POST /api/v1/runs/:id/calls` is served before Koa in its canonical form
 * (core/http/api/call-route.ts); the same call with its id percent-encoded goes
 * through Koa's router as every call did before. Each case is sent both ways
 * to a real platform with a real run: the answers must be the same, byte for
 * byte but for the date and a made-up request id.
 */
describe('API: the raw call route answers as Koa does', function () {
  this.timeout(180_000);
  let runs: RunPlatform;
  let platform: Platform;
  let id: string;
  let other: string;
  let reports: unknown[];

  before(async () => {
    runs = await startRunPlatform(testConfig({ maxBodyBytes: 64 * 1024 }));
    ({ platform, reports } = runs);
    id = await readyRun(runs, 'square');
    other = (await tokenFor(platform, 'other-team')).secret;
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('takes only POST to a literal run id without a query; Koa gets every other form', () => {
    assert.equal(rawCallRunId('POST', '/api/v1/runs/run-0123456789abcdef/calls'), 'run-0123456789abcdef');
    for (const [method, target] of [
      ['GET', '/api/v1/runs/run-0123456789abcdef/calls'],
      ['HEAD', '/api/v1/runs/run-0123456789abcdef/calls'],
      ['POST', '/api/v1/runs/run-%30123456789abcdef/calls'],
      ['POST', '/api/v1/runs/run-0123456789abcdef/calls?x=1'],
      ['POST', '/api/v1/runs/run-0123456789abcdef/calls/'],
      ['POST', '/api/v1/runs/run-0123456789ABCDEF/calls'],
      ['POST', '/api/v1/runs/run-xyz/calls'],
      ['POST', 'http://127.0.0.1/api/v1/runs/run-0123456789abcdef/calls'],
      ['POST', '/api/v1/runs'],
    ] as const) {
      assert.equal(rawCallRunId(method, target), null, `${method} ${target}`);
    }
  });

  it('frees the call and its slot when the client goes away in the middle of the answer', async () => {
    const slow = await readyRun(runs, 'slow');
    const unit = `default/runs/${slow}/slow`;
    const inFlight = () => platform.autoscaler.status(unit)!.containers.reduce((sum, container) => sum + container.inFlight, 0);
    const { hostname, port } = new URL(platform.url);
    const body = pickledCall([30]);
    const request = http.request({
      hostname,
      port,
      path: `/api/v1/runs/${slow}/calls`,
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${runs.owner}`,
        'content-type': 'application/vnd.svc.call+pickle',
        'content-length': String(body.length),
      },
    });
    const started = new Promise<void>((resolve, reject) => {
      request.on('response', (response) =>
        response.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('"line":"started"')) resolve();
        }),
      );
      request.on('error', reject);
    });
    request.end(body);
    await started;
    assert.equal(inFlight(), 1, 'the call holds its slot while it runs');
    request.destroy();
    await until('the slot is free again', () => inFlight() === 0);
    await until(
      'the run counts no call in flight',
      async () => (await runs.call('GET', `/api/v1/runs/${slow}`, { token: runs.owner })).json.run.calls.inFlight === 0,
    );
  });

  const cases: [string, (fixture: { id: string; other: string }) => Sent & { readonly id?: string }, number, string | null][] = [
    ['a call', () => ({ body: pickledCall([3]) }), 200, null],
    ['a call sent chunked', () => ({ body: pickledCall([4]), chunked: true }), 200, null],
    ['a call with its own request id', () => ({ body: pickledCall([5]), headers: { 'x-request-id': 'trace-123' } }), 200, null],
    ['no token', () => ({ body: pickledCall([1]), token: null }), 401, 'unauthorized'],
    ['a token svc does not know', () => ({ body: pickledCall([1]), token: `svc_${'x'.repeat(40)}` }), 401, 'unauthorized'],
    ["another workspace's token", ({ other }) => ({ body: pickledCall([1]), token: other }), 404, 'not_found'],
    ['a run that never was', () => ({ body: pickledCall([1]), id: 'run-0123456789abcdef' }), 404, 'not_found'],
    ['a declared length above the limit', () => ({ body: Buffer.alloc(65 * 1024, 1) }), 413, 'payload_too_large'],
    ['a chunked body above the limit', () => ({ body: Buffer.alloc(65 * 1024, 1), chunked: true }), 413, 'payload_too_large'],
    [
      'another Content-Type',
      () => ({ body: JSON.stringify({ args: [1] }), headers: { 'content-type': 'application/json' } }),
      400,
      'bad_request',
    ],
    ['no Content-Type', () => ({ body: pickledCall([1]), headers: { 'content-type': '' } }), 400, 'bad_request'],
    ['a body that is not a pickle', () => ({ body: 'not a pickle' }), 400, 'bad_request'],
    ['a malformed Host', () => ({ body: pickledCall([1]), headers: { host: 'bad host' } }), 400, 'bad_request'],
    [
      'the token checked before the Content-Type',
      () => ({ body: 'x', token: null, headers: { 'content-type': 'text/plain' } }),
      401,
      'unauthorized',
    ],
  ];

  for (const [name, make, status, code] of cases) {
    it(`answers ${name} alike: ${status}${code === null ? '' : ` ${code}`}`, async () => {
      const sent = make({ id, other });
      const runId = sent.id ?? id;
      const raw = await send(platform.url, `/api/v1/runs/${runId}/calls`, sent, runs.owner);
      const viaKoa = await send(platform.url, `/api/v1/runs/${koaForm(runId)}/calls`, sent, runs.owner);
      const keepRequestId = sent.headers?.['x-request-id'] !== undefined;
      assert.deepEqual(comparable(raw, keepRequestId), comparable(viaKoa, keepRequestId));
      assert.equal(raw.status, status, raw.body);
      if (code !== null) assert.equal(JSON.parse(raw.body).error.code, code, raw.body);
      else assert.match(raw.body, /"type":"result"/);
      if (keepRequestId) assert.equal(raw.headers['x-request-id'], 'trace-123');
    });
  }
});
