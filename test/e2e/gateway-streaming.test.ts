import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { tempDir, testConfig } from '../helpers/config.js';

/** Reads a response chunk by chunk: `next()` resolves the next piece of body text, `rest()` all that is left. */
function reader(response: http.IncomingMessage): { next(): Promise<string>; rest(): Promise<string> } {
  const chunks: string[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  response.on('data', (chunk: Buffer) => {
    chunks.push(chunk.toString());
    wake?.();
  });
  response.on('end', () => {
    ended = true;
    wake?.();
  });
  const arrival = () => new Promise<void>((resolve) => (wake = resolve));
  return {
    async next() {
      while (chunks.length === 0 && !ended) await arrival();
      return chunks.shift() ?? '';
    },
    async rest() {
      while (!ended) await arrival();
      return chunks.splice(0).join('');
    },
  };
}

function request(url: string, options: http.RequestOptions): { req: http.ClientRequest; response: Promise<http.IncomingMessage> } {
  let answered: (response: http.IncomingMessage) => void = () => {};
  const response = new Promise<http.IncomingMessage>((resolve) => (answered = resolve));
  const req = http.request(url, options, answered);
  req.on('error', () => {});
  return { req, response };
}

const event = (text: string) => JSON.parse(text.replace(/^data: /, '')) as unknown;

/** Both directions stream through the gateway, with a real Python container behind it. */
describe('gateway streaming (real containers)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let deployment: Deployment;
  const url = (name: string) => deployment.workloads.find((w) => w.name === name)!.url!;

  before(async () => {
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', 'streaming.py') });
    platform = await startPlatform({ config: testConfig() });
    deployment = await platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed',
      principal: null,
    });
  });
  after(async () => platform?.close());

  it('passes an SSE event on while the handler is still running', async () => {
    const flag = path.join(tempDir('svc-sse-'), 'flag');
    const { req, response } = request(`${url('events')}?flag=${encodeURIComponent(flag)}`, { method: 'GET' });
    req.end();
    const answer = await response;
    assert.equal(answer.statusCode, 200);
    assert.match(String(answer.headers['content-type']), /^text\/event-stream/);
    assert.match(String(answer.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const body = reader(answer);
    const first = await body.next();
    assert.ok(first.endsWith('\n\n'), 'one whole event');
    assert.deepEqual(event(first), { i: 0 });
    // The handler waits for this file before its second event: the first one came while it ran.
    assert.equal(existsSync(flag), false);
    writeFileSync(flag, '');
    assert.deepEqual(event(await body.rest()), { i: 1 });
  });

  for (const declared of [false, true]) {
    it(`streams a request body ${declared ? 'of declared length' : 'sent chunked'} to the container as it arrives`, async () => {
      const part = 'x'.repeat(1000);
      const headers: http.OutgoingHttpHeaders = {
        'Content-Type': 'text/plain',
        ...(declared ? { 'Content-Length': String(2 * part.length) } : {}),
      };
      const { req, response } = request(url('relay'), { method: 'POST', headers });
      req.write(part);
      const answer = await response;
      assert.equal(answer.statusCode, 200);
      const body = reader(answer);
      // The container answered after the first piece, while the rest of the body has not been sent yet.
      const first = await body.next();
      assert.match(first, new RegExp(`^first \\d+ length ${declared ? 2000 : 'none'}\n$`));
      assert.ok(Number(first.split(' ')[1]) > 0);
      req.end(part);
      assert.equal(await body.rest(), 'total 2000\n');
    });
  }
});
