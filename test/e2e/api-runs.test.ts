import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import type { Platform } from '../../core/platform/platform.js';
import type { Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { testConfig } from '../helpers/config.js';
import { upload } from './api-lifecycle-helpers.js';
import { openStream } from './event-stream.js';
import {
  bundleOfFolder,
  callRun,
  pickledCall,
  readyRun as startedRun,
  runFixture,
  startRunPlatform,
  unpickled,
  type RunPlatform,
} from './run-helpers.js';

/**
 * Remote runs over real HTTP, as `.remote()` and `svc run` drive them: a run
 * of one function from a manifest and an uploaded bundle, calls that stream
 * their output and then the result or the remote exception, logs, the end.
 * Real containers (test/fixtures/runs/ok) behind every call.
 */
describe('API: remote runs', function () {
  this.timeout(180_000);
  let runs: RunPlatform;
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifest: LoadedManifest;
  let sha256: string;
  let reports: unknown[];

  const createRun = (fields: Record<string, unknown>, token = owner) =>
    call('POST', '/api/v1/runs', { token, json: { manifest: manifest.raw, bundle: sha256, ...fields } });
  const readyRun = (fn: string, fields: Record<string, unknown> = {}) => startedRun(runs, fn, fields);

  before(async () => {
    runs = await startRunPlatform(testConfig({ maxBodyBytes: 64 * 1024 }));
    ({ platform, call, owner, manifest, sha256, reports } = runs);
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('starts a run at once (201, not ready yet) and its first call waits for it, then streams output and the result', async () => {
    const created = await createRun({ function: 'square' });
    assert.equal(created.status, 201, created.text);
    const { run } = created.json;
    assert.match(run.id, /^run-[0-9a-f]{16}$/);
    assert.equal(created.headers.get('location'), `/api/v1/runs/${run.id}`);
    assert.deepEqual(
      { app: run.app, function: run.function, failure: run.failure, idleTimeoutSeconds: run.idleTimeoutSeconds },
      { app: 'runs', function: 'square', failure: null, idleTimeoutSeconds: 300 },
    );
    assert.notEqual(run.status, 'ready', 'the answer comes before the container is up');

    const answer = await callRun(platform.url, owner, run.id, pickledCall([7]));
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    assert.match(answer.contentType ?? '', /^application\/x-ndjson/);
    const logs = answer.frames.filter((f) => f.type === 'log').map((f) => [f.stream, f.line]);
    assert.deepEqual(logs, [
      ['stdout', 'squaring 7'],
      ['stderr', 'a line on stderr'],
    ]);
    const last = answer.frames.at(-1)!;
    assert.equal(last.type, 'result');
    assert.equal(unpickled(last.pickle!), 49);

    const described = await call('GET', `/api/v1/runs/${run.id}`, { token: owner });
    assert.equal(described.status, 200);
    assert.deepEqual(
      { status: described.json.run.status, calls: described.json.run.calls },
      { status: 'ready', calls: { inFlight: 0, completed: 1 } },
    );
    const listed = await call('GET', '/api/v1/runs', { token: owner });
    assert.ok(listed.json.runs.some((r: { id: string }) => r.id === run.id));

    // svc usage counts the run's call (and its container) for the function, as for a deployed workload.
    await platform.usage.sample();
    const used = (await call('GET', '/api/v1/usage?since=24h', { token: owner })).json.rows.find(
      (r: { key: string }) => r.key === 'runs/square',
    );
    assert.equal(used?.calls, 1, JSON.stringify(used));
  });

  it('sends a remote exception as the last frame, with its type, message and remote traceback', async () => {
    const id = await readyRun('fail');
    const answer = await callRun(platform.url, owner, id, pickledCall([], { message: 'no such thing' }));
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.frames[0], { type: 'log', stream: 'stdout', line: 'about to fail' });
    const last = answer.frames.at(-1)!;
    assert.equal(last.type, 'error');
    assert.equal(last.exception, 'ValueError: no such thing');
    assert.match(last.traceback ?? '', /raise ValueError\(message\)/);
    assert.ok(last.pickle, 'the exception itself comes pickled, for the client to raise');
  });

  it('ends a call whose container dies with an error frame worker_crashed, and the run serves the next call', async () => {
    const id = await readyRun('crash');
    const answer = await callRun(platform.url, owner, id, pickledCall([]));
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.frames[0], { type: 'log', stream: 'stdout', line: 'crashing' });
    const last = answer.frames.at(-1)!;
    assert.deepEqual({ type: last.type, code: last.code }, { type: 'error', code: 'worker_crashed' });
    // The worker is replaced: the next call reaches a live one and gets its own answer, worker_crashed again. Its
    // head may leave before the worker dies (a 200 whose last frame says so) or not (a 502 with the same code): a
    // busy machine decides which, and the client raises the same error for both.
    const again = await callRun(platform.url, owner, id, pickledCall([]));
    const code = again.status === 200 ? again.frames.at(-1)!.code : again.json?.error?.code;
    assert.ok(again.status === 200 || again.status === 502, `the next call was answered ${again.status}: ${JSON.stringify(again.json)}`);
    assert.equal(code, 'worker_crashed');
  });

  it('keeps the run logs (build and lifecycle lines) and ends followers when the run is deleted', async () => {
    const id = await readyRun('square');
    assert.equal((await callRun(platform.url, owner, id, pickledCall([2]))).status, 200);
    const logs = await call('GET', `/api/v1/runs/${id}/logs`, { token: owner });
    assert.equal(logs.status, 200);
    const texts = logs.json.lines.map((l: { text: string }) => l.text);
    assert.ok(texts.includes('square is ready'), texts.join('\n'));
    assert.ok(logs.json.lines.every((l: { time: string; container: string }) => !Number.isNaN(Date.parse(l.time)) && l.container !== ''));

    const stream = await openStream(`${platform.url}/api/v1/runs/${id}/logs`, owner);
    await stream.next((e) => e.event === 'log');
    const ended = await call('DELETE', `/api/v1/runs/${id}`, { token: owner });
    assert.equal(ended.status, 204);
    const end = await stream.next((e) => e.event === 'end');
    assert.equal(JSON.parse(end.data).reason, 'deleted');
    assert.equal((await call('GET', `/api/v1/runs/${id}`, { token: owner })).status, 404);
    const late = await callRun(platform.url, owner, id, pickledCall([2]));
    assert.deepEqual([late.status, late.json.error.code], [404, 'not_found']);
    // Its containers are gone.
    assert.equal(platform.driver.status(`default/runs/${id}/square`).length, 0);
  });

  it('lets a call in flight finish when its run is deleted', async () => {
    const id = await readyRun('slow');
    const calling = callRun(platform.url, owner, id, pickledCall([1.5]));
    await sleep(300);
    const ended = await call('DELETE', `/api/v1/runs/${id}`, { token: owner });
    assert.equal(ended.status, 204);
    const answer = await calling;
    assert.equal(unpickled(answer.frames.at(-1)!.pickle!), 'done');
  });

  it('ends a run left idle for its timeout, and not while a call runs', async () => {
    const id = await readyRun('slow', { idleTimeoutSeconds: 1 });
    // The call outlasts the timeout: a run in use never ends.
    const answer = await callRun(platform.url, owner, id, pickledCall([2.5]));
    assert.equal(unpickled(answer.frames.at(-1)!.pickle!), 'done');
    // Listing does not count as use: poll it until the run is gone.
    let gone = false;
    for (let i = 0; i < 100 && !gone; i++) {
      gone = !(await call('GET', '/api/v1/runs', { token: owner })).json.runs.some((r: { id: string }) => r.id === id);
      if (!gone) await sleep(100);
    }
    assert.ok(gone, 'the idle run ended');
  });

  it('keeps workspaces apart: another workspace neither sees nor calls nor ends a run', async () => {
    const id = await readyRun('square');
    const other = (await tokenFor(platform, 'other-team')).secret;
    assert.equal((await call('GET', `/api/v1/runs/${id}`, { token: other })).status, 404);
    assert.equal((await call('DELETE', `/api/v1/runs/${id}`, { token: other })).status, 404);
    assert.deepEqual((await call('GET', '/api/v1/runs', { token: other })).json.runs, []);
    assert.equal((await callRun(platform.url, other, id, pickledCall([1]))).status, 404);
    assert.equal((await call('GET', `/api/v1/runs/${id}/logs`, { token: other })).status, 404);
    // Nor can it start one from this workspace's bundle.
    const foreign = await call('POST', '/api/v1/runs', {
      token: other,
      json: { manifest: manifest.raw, bundle: sha256, function: 'square' },
    });
    assert.equal(foreign.status, 404);
    assert.equal((await call('GET', `/api/v1/runs/${id}`, { token: owner })).status, 200);
  });

  it('refuses bad input with specific errors', async () => {
    const cases: [Record<string, unknown>, number, string, RegExp][] = [
      [{ function: 'nope' }, 404, 'not_found', /has no function nope.*Its functions: square, fail, slow, crash/s],
      [{ function: 'page' }, 400, 'bad_request', /page is an endpoint workload; remote runs call functions/],
      [{}, 400, 'bad_request', /"function" is required/],
      [{ function: 'Square' }, 422, 'name_invalid', /function name "Square"/],
      [{ function: 'square', idleTimeoutSeconds: 0 }, 400, 'bad_request', /"idleTimeoutSeconds" must be a whole number from 1 to 86400/],
      [{ function: 'square', idleTimeoutSeconds: '60' }, 400, 'bad_request', /"idleTimeoutSeconds"/],
      [{ function: 'square', extra: 1 }, 400, 'bad_request', /unknown field "extra"/],
      [{ function: 'square', bundle: 'f'.repeat(64) }, 404, 'not_found', /bundle/],
      [{ function: 'square', manifest: { app: 'x' } }, 422, 'manifest_invalid', /./],
    ];
    for (const [fields, status, code, message] of cases) {
      const answer = await createRun(fields);
      assert.equal(answer.status, status, `${JSON.stringify(fields)}: ${answer.text}`);
      assert.equal(answer.json.error.code, code, `${JSON.stringify(fields)}: ${answer.text}`);
      assert.match(answer.json.error.message + (answer.json.error.hint ?? ''), message, `${JSON.stringify(fields)}: ${answer.text}`);
    }
    const id = await readyRun('square');
    const wrongType = await callRun(platform.url, owner, id, JSON.stringify({ args: [1] }), 'application/json');
    assert.deepEqual([wrongType.status, wrongType.json.error.code], [400, 'bad_request']);
    assert.match(wrongType.json.error.message, /application\/vnd\.svc\.call\+pickle/);
    const notPickle = await callRun(platform.url, owner, id, 'not a pickle');
    assert.deepEqual([notPickle.status, notPickle.json.error.code], [400, 'bad_request']);
    const tooLarge = await callRun(platform.url, owner, id, Buffer.alloc(65 * 1024, 1));
    assert.deepEqual([tooLarge.status, tooLarge.json.error.code], [413, 'payload_too_large']);
    assert.deepEqual((await call('GET', '/api/v1/runs/run-xyz', { token: owner })).json.error.code, 'bad_request');
    assert.equal((await call('GET', '/api/v1/runs/run-0123456789abcdef', { token: owner })).status, 404);
    assert.equal((await call('POST', '/api/v1/runs', { json: { function: 'square' } })).status, 401);
    // The run survived all of it.
    assert.equal(unpickled((await callRun(platform.url, owner, id, pickledCall([3]))).frames.at(-1)!.pickle!), 9);
  });

  it('runs the deployed version of a function by its app (svc.Function.from_name), and refuses what cannot run so', async () => {
    const deployed = await call('POST', '/api/v1/apps/runs/deployments', {
      token: owner,
      json: { manifest: manifest.raw, bundle: sha256 },
    });
    assert.ok([200, 201].includes(deployed.status), deployed.text);
    const byApp = (fields: Record<string, unknown>, token = owner) => call('POST', '/api/v1/runs', { token, json: fields });
    const created = await byApp({ app: 'runs', function: 'square' });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual([created.json.run.app, created.json.run.function], ['runs', 'square']);
    const answer = await callRun(platform.url, owner, created.json.run.id, pickledCall([6]));
    assert.equal(unpickled(answer.frames.at(-1)!.pickle!), 36);

    const other = (await tokenFor(platform, 'other-team')).secret;
    const cases: [Record<string, unknown>, string | undefined, number, string, RegExp][] = [
      [{ app: 'runs', function: 'square', bundle: sha256 }, undefined, 400, 'bad_request', /either "manifest" and "bundle".*or "app"/],
      [{ app: 'runs', function: 'square', manifest: manifest.raw, bundle: sha256 }, undefined, 400, 'bad_request', /not both/],
      [{ function: 'square' }, undefined, 400, 'bad_request', /either "manifest" and "bundle"/],
      [{ app: 'nope', function: 'square' }, undefined, 404, 'not_found', /no deployed app nope/],
      // Another workspace's app is not found either, in the same words.
      [{ app: 'runs', function: 'square' }, other, 404, 'not_found', /^the workspace has no deployed app runs\./],
      [{ app: 'runs', function: 'nope' }, undefined, 404, 'not_found', /has no function nope.*Its functions: square/s],
      [{ app: 'runs', function: 'page' }, undefined, 400, 'bad_request', /page is an endpoint workload/],
      [{ app: 'Runs', function: 'square' }, undefined, 422, 'name_invalid', /app name "Runs"/],
    ];
    for (const [fields, token, status, code, message] of cases) {
      const refused = await byApp(fields, token);
      assert.equal(refused.status, status, `${JSON.stringify(fields)}: ${refused.text}`);
      assert.equal(refused.json.error.code, code, `${JSON.stringify(fields)}: ${refused.text}`);
      assert.match(refused.json.error.message + (refused.json.error.hint ?? ''), message, `${JSON.stringify(fields)}: ${refused.text}`);
    }
    assert.equal((await call('POST', '/api/v1/apps/runs/pause', { token: owner })).status, 200);
    const paused = await byApp({ app: 'runs', function: 'square' });
    assert.deepEqual([paused.status, paused.json.error.code], [503, 'app_paused']);
    assert.match(paused.json.error.hint, /svc app resume runs/);
    assert.equal((await call('DELETE', '/api/v1/apps/runs', { token: owner })).status, 204);
  });

  it('fails a run whose image cannot be built: the call gets image_build_failed, the run says why, the build log is kept', async () => {
    const broken = await loadManifest({ target: path.join(runFixture('unbuildable'), 'app.py') });
    const bundle = await bundleOfFolder(runFixture('unbuildable'));
    assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
    const created = await call('POST', '/api/v1/runs', {
      token: owner,
      json: { manifest: broken.raw, bundle: bundle.sha256, function: 'noop' },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.json.run.id;
    const answer = await callRun(platform.url, owner, id, pickledCall([]));
    assert.deepEqual([answer.status, answer.json.error.code], [500, 'image_build_failed']);
    const described = await call('GET', `/api/v1/runs/${id}`, { token: owner });
    assert.deepEqual([described.json.run.status, described.json.run.failure.code], ['failed', 'image_build_failed']);
    const logs = await call('GET', `/api/v1/runs/${id}/logs`, { token: owner });
    assert.ok(
      logs.json.lines.some(
        (l: { container: string; text: string }) => l.container === 'build' && /svc-test-no-such-package-7f3a/.test(l.text),
      ),
      logs.text,
    );
    assert.equal((await call('DELETE', `/api/v1/runs/${id}`, { token: owner })).status, 204);
  });
});
