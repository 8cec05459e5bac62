/**
 * `Prefer: respond-async` (RFC 7240) on workload URLs, end to end on a real platform with real
 * containers: the gateway checks the request as for any other, keeps it as a call and answers 202
 * with its Location; the leader sends it to the URL later, and the endpoint's answer is the call's
 * outcome. Refusals (no token, a realtime URL, too large a body) keep nothing.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { examplesRoot, packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { testConfig } from '../helpers/config.js';
import { deployRequest } from './lifecycle-helpers.js';

const ASYNC = { prefer: 'respond-async' };

describe('Prefer: respond-async on workload URLs (real containers)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  const reports: unknown[] = [];
  const url = (app: string, route: string) => `${platform.url}/default/${app}${route}`;
  const calls = async (app: string) => (await call('GET', `/api/v1/apps/${app}/calls`, { token: owner })).json.calls as { id: string }[];
  /** The response a deferred request's outcome keeps, its body decoded. */
  const kept = async (id: string) => {
    const done = await call('GET', `/api/v1/calls/${id}/outcome`, { token: owner, headers: { prefer: 'wait=60' } });
    assert.equal(done.status, 200, done.text);
    const { response } = done.json.frame;
    return { call: done.json.call, frame: done.json.frame, response, body: Buffer.from(response.body, 'base64').toString('utf8') };
  };

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    for (const target of [path.join(examplesRoot, 'quickstart', 'app.py'), path.join(packageRoot, 'test', 'fixtures', 'apps', 'live.py')])
      await platform.deployments.deploy(deployRequest(await loadManifest({ target })));
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it("keeps a protected POST as a call, answers 202 with its Location, and the outcome is the endpoint's answer", async () => {
    const accepted = await fetch(url('quickstart', '/greet/greet'), {
      method: 'POST',
      headers: { ...ASYNC, authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada', excited: true }),
    });
    assert.equal(accepted.status, 202);
    assert.equal(accepted.headers.get('preference-applied'), 'respond-async');
    const body = (await accepted.json()) as {
      call_id: string;
      status_url: string;
      call: { status: string; app: string; function: string };
    };
    assert.match(body.call_id, /^call-[0-9a-f]{20}$/);
    assert.equal(accepted.headers.get('location'), `/api/v1/calls/${body.call_id}`);
    assert.equal(body.status_url, `/api/v1/calls/${body.call_id}`);
    assert.deepEqual([body.call.app, body.call.function], ['quickstart', 'greet']);

    const done = await kept(body.call_id);
    assert.equal(done.call.status, 'succeeded');
    assert.equal(done.frame.type, 'result');
    assert.equal(done.response.status, 200);
    assert.deepEqual(JSON.parse(done.body), { message: 'Hello, Ada!', length: 11 });
    const headers = done.response.headers as string[];
    assert.match(headers[headers.findIndex((name, i) => i % 2 === 0 && name === 'content-type') + 1]!, /application\/json/);
    assert.deepEqual(
      (await calls('quickstart')).map((c) => c.id),
      [body.call_id],
    );
  });

  it('sends a GET with its query, keeps a 4xx answer as a succeeded call, and a public URL defers only with a token', async () => {
    const anonymous = await fetch(url('quickstart', '/hello/hello?name=Bo'), { headers: ASYNC });
    assert.equal(anonymous.status, 200, 'a public URL without a token answers at once: nobody could read a kept outcome');
    assert.equal(anonymous.headers.get('preference-applied'), null);
    assert.deepEqual(await anonymous.json(), { message: 'Hello, Bo!' });

    const withToken = await fetch(url('quickstart', '/hello/hello?name=Bo'), { headers: { ...ASYNC, authorization: `Bearer ${owner}` } });
    assert.equal(withToken.status, 202);
    const got = await kept(((await withToken.json()) as { call_id: string }).call_id);
    assert.deepEqual([got.response.status, JSON.parse(got.body)], [200, { message: 'Hello, Bo!' }]);

    const invalid = await fetch(url('quickstart', '/greet/greet'), {
      method: 'POST',
      headers: { ...ASYNC, authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ excited: 'very' }),
    });
    assert.equal(invalid.status, 202, "arguments are the endpoint's to judge, when the request is sent");
    const refused = await kept(((await invalid.json()) as { call_id: string }).call_id);
    assert.equal(refused.call.status, 'succeeded', "a 4xx is the endpoint's answer, not a failure of the call");
    assert.equal(refused.response.status, 422);
    assert.equal(JSON.parse(refused.body).error.code, 'invalid_arguments');
  });

  it('refuses without keeping anything: no token on a protected URL, another workspace, a realtime URL, a bad callback URL, too large a body', async () => {
    const before = (await calls('quickstart')).length;
    const post = (headers: Record<string, string>, body = '{"name":"x"}') =>
      fetch(url('quickstart', '/greet/greet'), {
        method: 'POST',
        headers: { ...ASYNC, 'content-type': 'application/json', ...headers },
        body,
      });
    assert.equal((await post({})).status, 401);
    const stranger = await tokenFor(platform, 'elsewhere');
    const other = await post({ authorization: `Bearer ${stranger.secret}` });
    assert.equal(other.status, 404, "another workspace's URL is as unknown as one that never was");

    const realtime = await fetch(url('live', '/talk'), { headers: { ...ASYNC, authorization: `Bearer ${owner}` } });
    assert.equal(realtime.status, 400);
    const error = ((await realtime.json()) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'bad_request');
    assert.match(error.message, /talk is a realtime workload: its URL holds a WebSocket open/);

    const badCallback = await post({ authorization: `Bearer ${owner}`, 'x-svc-callback-url': 'ftp://example.com/hook' });
    assert.equal(badCallback.status, 400);
    assert.match(((await badCallback.json()) as { error: { message: string } }).error.message, /X-Svc-Callback-Url/);

    const large = await post({ authorization: `Bearer ${owner}` }, JSON.stringify({ name: 'x'.repeat(600 * 1024) }));
    assert.equal(large.status, 413);
    assert.match(
      ((await large.json()) as { error: { message: string } }).error.message,
      /Prefer: respond-async may take at most 524288 bytes/,
    );
    assert.equal((await calls('quickstart')).length, before, 'nothing was kept');
  });

  it("forwards the request to the container without svc's token or its own mark", async () => {
    const accepted = await fetch(url('live', '/web/headers'), {
      headers: { ...ASYNC, authorization: `Bearer ${owner}`, 'x-svc-deferred': 'guess', 'x-mine': 'kept' },
    });
    assert.equal(accepted.status, 202);
    const seen = JSON.parse((await kept(((await accepted.json()) as { call_id: string }).call_id)).body) as Record<string, string>;
    assert.equal(seen['x-mine'], 'kept');
    assert.equal(seen.authorization, undefined);
    assert.equal(seen['x-svc-deferred'], undefined);
    assert.equal(seen.prefer, undefined);
  });
});
