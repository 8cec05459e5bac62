/**
 * Spawned calls over real HTTP against real containers (test/fixtures/calls): recorded before the
 * answer, run by the leader, their outcome kept; JSON calls of a deployed function from any
 * language; cancelling; what a restart of svc does to a call that runs (at least once, up to its
 * retries, else `call_interrupted`) and to one still queued; and the refusals.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoadedManifest } from '../../core/infra/manifest-loader/load.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { sample, scrape } from '../helpers/metrics-text.js';
import type { ServerConfig } from '../../config/schema.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { until as waitFor } from '../helpers/until.js';
import { callRequests, uploadCallsFixture } from './call-helpers.js';
import { pickledCall, unpickled } from './run-helpers.js';

describe('API: spawned calls', function () {
  this.timeout(180_000);
  let config: ServerConfig;
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifest: LoadedManifest;
  let sha256: string;
  const reports: unknown[] = [];

  const start = async () => {
    platform = await startPlatform({ config, report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
  };
  const { spawn, outcome, statusOf, until: untilView } = callRequests(() => ({ call, owner, manifest, sha256 }));
  const listCalls = (query = '', token = owner, app = 'calls') => call('GET', `/api/v1/apps/${app}/calls${query}`, { token });
  const until = async (id: string, done: (c: { status: string; attempt: number }) => boolean) => void (await untilView(id, done));

  before(async () => {
    config = testConfig();
    await start();
    ({ manifest, sha256 } = await uploadCallsFixture(platform.url, owner));
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('records a spawned call at once (202, queued), runs it, and keeps its outcome: the pickled result, or the exception', async () => {
    const spawned = await spawn('square', [7]);
    assert.equal(spawned.status, 202, spawned.text);
    const { id, status, attempt, maxAttempts } = spawned.json.call;
    assert.match(id, /^call-[0-9a-f]{20}$/);
    assert.equal(spawned.headers.get('location'), `/api/v1/calls/${id}`);
    assert.deepEqual([status, attempt, maxAttempts], ['queued', 0, 1]);
    const done = await outcome(id);
    assert.equal(done.status, 200, done.text);
    assert.equal(done.json.frame.type, 'result');
    assert.equal(unpickled(done.json.frame.pickle), 49);
    const view = await statusOf(id);
    assert.deepEqual([view.status, view.attempt, view.error], ['succeeded', 1, null]);
    assert.ok(view.durationMs >= 0 && view.startedAt !== null && view.endedAt !== null);

    const failing = (await spawn('fail', ['no database'])).json.call.id;
    const failed = await outcome(failing);
    assert.equal(failed.json.frame.type, 'error');
    assert.match(failed.json.frame.traceback, /raise ValueError\(message\)/);
    assert.deepEqual((await statusOf(failing)).error, { code: null, message: 'ValueError: no database' });
    const metrics = await scrape(platform.url, owner);
    const of = (fn: string) => `workspace="default",app="calls",function="${fn}"`;
    assert.equal(sample(metrics, 'svc_calls_ended_total', `${of('square')},status="succeeded"`), 1, metrics);
    assert.equal(sample(metrics, 'svc_calls_ended_total', `${of('fail')},status="failed"`), 1);
    assert.equal(sample(metrics, 'svc_call_duration_seconds_count', of('square')), 1);

    // Not deployed: the app is known by its calls, which its list holds (of any status, or of one).
    const listed = await listCalls();
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.json.calls.map((c: { id: string }) => c.id),
      [failing, id],
    );
    assert.deepEqual((await listCalls('?status=queued')).json.calls, []);
  });

  it('spawns a deployed function with JSON arguments from any language, and answers its JSON result', async () => {
    const deployed = await call('POST', '/api/v1/apps/calls/deployments', {
      token: owner,
      json: { manifest: manifest.raw, bundle: sha256 },
    });
    assert.ok([200, 201].includes(deployed.status), deployed.text);
    const spawned = await call('POST', '/api/v1/apps/calls/functions/shift/calls', { token: owner, json: { p: { x: 1, y: 2 }, by: 10 } });
    assert.equal(spawned.status, 202, spawned.text);
    const { call_id: id, status_url: statusUrl } = spawned.json;
    assert.equal(statusUrl, `/api/v1/calls/${id}`);
    assert.equal((await outcome(id)).json.frame.json.x, 11);
    const view = await statusOf(id);
    assert.deepEqual([view.status, view.result], ['succeeded', { x: 11, y: 12 }]);

    // Arguments the function's types refuse: the call fails with the endpoint's own message.
    const wrong = (await call('POST', '/api/v1/apps/calls/functions/square/calls', { token: owner, json: { x: 'seven' } })).json.call_id;
    await outcome(wrong);
    const refused = await statusOf(wrong);
    assert.equal(refused.status, 'failed');
    assert.equal(refused.error.code, 'invalid_arguments');
    assert.match(refused.error.message, /x/);
    // A pickled call of the deployed version, by app (svc.Function.from_name(...).spawn()).
    const byApp = await call('POST', '/api/v1/calls', {
      token: owner,
      json: { app: 'calls', function: 'square', input: pickledCall([5]).toString('base64') },
    });
    assert.equal(unpickled((await outcome(byApp.json.call.id)).json.frame.pickle), 25);
  });

  it("keeps what a call printed, stdout and stderr, and a running call's lines as they come", async () => {
    const id = (await spawn('chatty', [3])).json.call.id;
    assert.equal(unpickled((await outcome(id)).json.frame.pickle), 3);
    const logs = await call('GET', `/api/v1/calls/${id}/logs`, { token: owner });
    assert.equal(logs.status, 200, logs.text);
    assert.deepEqual(logs.json, {
      lines: [
        { attempt: 1, stream: 'stdout', line: 'line 0' },
        { attempt: 1, stream: 'stdout', line: 'line 1' },
        { attempt: 1, stream: 'stdout', line: 'line 2' },
        { attempt: 1, stream: 'stderr', line: 'done printing' },
      ],
      dropped: 0,
    });
    // The container's log has them too, each tagged with the call's id (here the run's: a deployed
    // function's lines go to its deployment's log, svc logs).
    const run = (await call('GET', '/api/v1/runs', { token: owner })).json.runs.find((r: { function: string }) => r.function === 'chatty');
    const tagged = await waitFor("the call's lines in the run's logs", async () => {
      const answer = await call('GET', `/api/v1/runs/${run.id}/logs`, { token: owner });
      const mine = (answer.json.lines as { stream: string; text: string }[]).filter((line) => line.text.startsWith(`[${id}] `));
      return mine.length === 4 && mine;
    });
    assert.deepEqual(
      tagged.map((line) => [line.stream, line.text]),
      [
        ['stdout', `[${id}] line 0`],
        ['stdout', `[${id}] line 1`],
        ['stdout', `[${id}] line 2`],
        ['stderr', `[${id}] done printing`],
      ],
    );

    const gate = path.join(tempDir('svc-gate-'), 'open');
    const running = (await spawn('gated-once', [gate])).json.call.id;
    const early = await waitFor("the running call's first line", async () => {
      const answer = await call('GET', `/api/v1/calls/${running}/logs`, { token: owner });
      return answer.json.lines.length > 0 && answer.json;
    });
    assert.deepEqual(early.lines, [{ attempt: 1, stream: 'stdout', line: `waiting for ${gate}` }]);
    assert.equal((await statusOf(running)).status, 'running', 'read while it runs');
    writeFileSync(gate, '');
    assert.equal((await outcome(running)).status, 200);

    const stranger = await tokenFor(platform, 'elsewhere');
    const hidden = await call('GET', `/api/v1/calls/${id}/logs`, { token: stranger.secret });
    assert.equal(hidden.status, 404, "another workspace's call is as unknown as one that never was");
  });

  it('cancels a call that has not ended, and says so to whoever waits for it; a call that ended cannot be cancelled', async () => {
    const gate = path.join(tempDir('svc-gate-'), 'open');
    const id = (await spawn('gated-once', [gate])).json.call.id;
    await until(id, (c) => c.status === 'running');
    const waiting = outcome(id, 30);
    assert.equal((await call('DELETE', `/api/v1/calls/${id}`, { token: owner })).status, 204);
    const answered = await waiting;
    assert.deepEqual([answered.status, answered.json.error.code], [409, 'call_cancelled']);
    assert.equal((await statusOf(id)).status, 'cancelled');
    const again = await call('DELETE', `/api/v1/calls/${id}`, { token: owner });
    assert.deepEqual([again.status, again.json.error.code, again.json.error.details.status], [409, 'conflict', 'cancelled']);
    writeFileSync(gate, '');
  });

  it('keeps calls across a restart of svc: a running one runs again within its retries, else fails call_interrupted', async () => {
    const gates = tempDir('svc-gates-');
    const spawnedRetried = await spawn('gated', [path.join(gates, 'a')]);
    assert.equal(spawnedRetried.status, 202, spawnedRetried.text);
    const retried = spawnedRetried.json.call.id;
    const once = (await spawn('gated-once', [path.join(gates, 'b')])).json.call.id;
    await until(retried, (c) => c.status === 'running');
    await until(once, (c) => c.status === 'running');
    await platform.close();
    await start();
    writeFileSync(path.join(gates, 'a'), '');
    writeFileSync(path.join(gates, 'b'), '');
    const done = await outcome(retried);
    assert.equal(unpickled(done.json.frame.pickle), 'opened');
    assert.deepEqual([done.json.call.status, done.json.call.attempt, done.json.call.maxAttempts], ['succeeded', 2, 2]);
    const interrupted = await statusOf(once);
    assert.equal(interrupted.status, 'failed');
    assert.equal(interrupted.error.code, 'call_interrupted');
    assert.match(interrupted.error.message, /attempt 1 of 1/);
    assert.ok(existsSync(path.join(gates, 'b')));
  });

  it('refuses bad input with specific errors, and keeps workspaces apart', async () => {
    const id = (await spawn('square', [2])).json.call.id;
    await outcome(id);
    const other = (await tokenFor(platform, 'other-team')).secret;
    const unknown = await call('GET', '/api/v1/calls/call-0123456789abcdef0123', { token: owner });
    const foreign = await call('GET', `/api/v1/calls/${id}`, { token: other });
    assert.deepEqual([unknown.status, foreign.status], [404, 404]);
    assert.equal(foreign.json.error.message, unknown.json.error.message.replace('call-0123456789abcdef0123', id));
    assert.equal((await call('DELETE', `/api/v1/calls/${id}`, { token: other })).status, 404);
    assert.equal((await outcome(id, 0, other)).status, 404);
    assert.equal((await call('GET', '/api/v1/calls/run-1', { token: owner })).json.error.code, 'bad_request');
    const cases: [Record<string, unknown>, number, string, RegExp][] = [
      [{ input: 'not base64!' }, 400, 'bad_request', /base64/],
      [{ app: 'calls' }, 400, 'bad_request', /not both/],
      [{ function: 'nope' }, 404, 'not_found', /has no function nope/],
      [{ bundle: 'f'.repeat(64) }, 404, 'not_found', /bundle/],
      [{ input: Buffer.alloc(600 * 1024).toString('base64') }, 413, 'payload_too_large', /at most 524288 bytes/],
    ];
    for (const [fields, status, code, message] of cases) {
      const refused = await spawn('square', [1], fields);
      assert.equal(refused.status, status, `${JSON.stringify(fields).slice(0, 80)}: ${refused.text.slice(0, 300)}`);
      assert.equal(refused.json.error.code, code);
      assert.match(refused.json.error.message, message);
    }
    const notDeployed = await call('POST', '/api/v1/apps/nope/functions/square/calls', { token: owner, json: {} });
    assert.deepEqual([notDeployed.status, notDeployed.json.error.code], [404, 'not_found']);
  });

  it('spawns a call group in batches (spawn_map): each input a call of its own, read by its index; a closed group takes no more; cancelling it cancels what has not ended', async () => {
    const inputs = (...values: unknown[][]) => values.map((args) => pickledCall(args).toString('base64'));
    const code = { manifest: manifest.raw, bundle: sha256, function: 'square' };
    const first = await call('POST', '/api/v1/call-groups', { token: owner, json: { ...code, inputs: inputs([1], [2]), more: true } });
    assert.equal(first.status, 202, first.text);
    const group = first.json.group.id;
    assert.match(group, /^group-[0-9a-f]{20}$/);
    assert.equal(first.headers.get('location'), `/api/v1/call-groups/${group}`);
    assert.deepEqual([first.json.group.inputs, first.json.group.closed], [2, false]);
    assert.equal((await call('GET', `/api/v1/call-groups/${group}`, { token: owner })).json.group.status, 'running', 'more may come');
    const last = await call('POST', `/api/v1/call-groups/${group}/inputs`, { token: owner, json: { inputs: inputs([3]) } });
    assert.equal(last.status, 200, last.text);
    assert.deepEqual([last.json.group.inputs, last.json.group.closed], [3, true]);
    const ids = [...first.json.calls, ...last.json.calls];
    const results = await Promise.all(ids.map(async (id: string) => unpickled((await outcome(id)).json.frame.pickle)));
    assert.deepEqual(results, [1, 4, 9], 'each input ran, in its own call');
    const members = await call('GET', `/api/v1/call-groups/${group}/calls?from=1&limit=2`, { token: owner });
    assert.deepEqual(
      members.json.calls.map((c: { id: string; group: unknown }) => [c.id, c.group]),
      [
        [ids[1], { id: group, index: 1 }],
        [ids[2], { id: group, index: 2 }],
      ],
    );
    const done = (await call('GET', `/api/v1/call-groups/${group}`, { token: owner })).json.group;
    assert.deepEqual([done.status, done.counts.succeeded, done.counts.queued], ['succeeded', 3, 0]);
    const closed = await call('POST', `/api/v1/call-groups/${group}/inputs`, { token: owner, json: { inputs: inputs([4]) } });
    assert.deepEqual([closed.status, closed.json.error.code], [409, 'conflict']);
    assert.equal((await call('GET', `/api/v1/call-groups/${group}`, { token: owner })).json.group.inputs, 3, 'nothing recorded');

    // Refusals: a batch over 1000, an input that is not base64, an id that is no group's, another workspace's group.
    const big = await call('POST', '/api/v1/call-groups', { token: owner, json: { ...code, inputs: Array(1001).fill(inputs([1])[0]) } });
    assert.deepEqual([big.status, big.json.error.code], [400, 'bad_request']);
    assert.match(big.json.error.message, /at most 1000/);
    const huge = Buffer.alloc(513 * 1024).toString('base64');
    const tooLarge = await call('POST', '/api/v1/call-groups', { token: owner, json: { ...code, inputs: [inputs([1])[0], huge] } });
    assert.deepEqual([tooLarge.status, tooLarge.json.error.code], [413, 'payload_too_large']);
    assert.match(tooLarge.json.error.message, /^input 1 is 525312 bytes pickled; a spawned call takes at most 524288 bytes/);
    const notBase64 = await call('POST', '/api/v1/call-groups', { token: owner, json: { ...code, inputs: ['not base64!'] } });
    assert.match(notBase64.json.error.message, /"inputs\[0\]" must be the pickled call/);
    assert.equal((await call('GET', '/api/v1/call-groups/call-0123456789abcdef0123', { token: owner })).status, 400);
    const stranger = await tokenFor(platform, 'elsewhere');
    const hidden = await call('GET', `/api/v1/call-groups/${group}`, { token: stranger.secret });
    const never = await call('GET', '/api/v1/call-groups/group-0123456789abcdef0123', { token: owner });
    assert.deepEqual([hidden.status, never.status], [404, 404]);
    assert.equal(hidden.json.error.message.replace(group, 'ID'), never.json.error.message.replace('group-0123456789abcdef0123', 'ID'));

    // Cancelling a group whose inputs wait on a gate: none of them runs to its end.
    const gate = path.join(tempDir('svc-gate-'), 'open');
    const held = await call('POST', '/api/v1/call-groups', {
      token: owner,
      json: { ...code, function: 'gated-once', inputs: inputs([gate], [gate]) },
    });
    const cancelled = await call('DELETE', `/api/v1/call-groups/${held.json.group.id}`, { token: owner });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.deepEqual([cancelled.json.cancelled, cancelled.json.group.status, cancelled.json.group.counts.cancelled], [2, 'cancelled', 2]);
    assert.equal((await outcome(held.json.calls[0], 0)).status, 409, 'a cancelled input has no result');
  });

  it("lists an app's calls newest first, of one status, at most `limit`; refuses bad query values; keeps workspaces apart", async () => {
    const newest = (await spawn('square', [3])).json.call.id;
    await outcome(newest);
    const listed = await listCalls();
    assert.equal(listed.status, 200, listed.text);
    const calls: { id: string; status: string; createdAt: string; function: string }[] = listed.json.calls;
    assert.equal(calls[0]!.id, newest);
    const times = calls.map((c) => c.createdAt);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
    assert.ok(calls.length >= 8, `every call of the app so far: ${calls.length}`);
    // No result in the list, not even a JSON call's (GET /calls/:id has it).
    const shifted = calls.find((c) => c.function === 'shift')!;
    assert.equal('result' in shifted, false);
    assert.ok('result' in (await statusOf(shifted.id)));

    for (const status of ['failed', 'cancelled', 'succeeded']) {
      const only = await listCalls(`?status=${status}`);
      assert.equal(only.status, 200, only.text);
      const expected = calls.filter((c) => c.status === status).map((c) => c.id);
      assert.ok(expected.length > 0, status);
      assert.deepEqual(
        only.json.calls.map((c: { id: string }) => c.id),
        expected,
      );
    }
    assert.deepEqual(
      (await listCalls('?limit=2')).json.calls.map((c: { id: string }) => c.id),
      calls.slice(0, 2).map((c) => c.id),
    );
    assert.deepEqual((await listCalls('?status=failed&limit=1')).json.calls.length, 1);
    assert.equal((await listCalls('?limit=1000')).json.calls.length, calls.length);

    const refusals: [string, RegExp][] = [
      ['?status=done', /status="done" is not a call status; it is one of queued, running, succeeded, failed, cancelled, expired/],
      ['?limit=0', /limit="0" is not a whole number from 1 to 1000/],
      ['?limit=1001', /limit="1001"/],
      ['?limit=ten', /limit="ten"/],
      ['?limit=-1', /limit="-1"/],
      ['?since=1h', /takes only the query parameters status, limit/],
    ];
    for (const [query, message] of refusals) {
      const refused = await listCalls(query);
      assert.deepEqual([refused.status, refused.json.error.code], [400, 'bad_request'], `${query}: ${refused.text}`);
      assert.match(refused.json.error.message, message);
    }
    assert.equal((await listCalls('', owner, 'Bad_Name')).json.error.code, 'name_invalid');

    // Another workspace's app is not found, in the words of one that never was.
    const other = (await tokenFor(platform, 'other-team')).secret;
    const foreign = await listCalls('', other);
    const never = await listCalls('', other, 'never');
    assert.deepEqual([foreign.status, never.status], [404, 404]);
    assert.equal(foreign.json.error.message, never.json.error.message.replace('never', 'calls'));
    assert.equal((await listCalls('', owner, 'never')).status, 404);
  });
});
