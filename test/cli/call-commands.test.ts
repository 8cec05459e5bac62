import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { appCalls } from '../../cli/commands/app-calls.js';
import { callCancel, callGet, callLogs, callWait } from '../../cli/commands/call.js';
import { sleep } from '../../cli/context.js';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { upload } from '../e2e/api-lifecycle-helpers.js';
import { bundleOfFolder, pickledCall } from '../e2e/run-helpers.js';
import { capture, rejectsWith } from './fixture.js';

const FIXTURE = path.join(packageRoot, 'test', 'fixtures', 'calls');

/**
 * svc app calls and svc call get | wait | cancel, run in-process against a real platform over
 * real HTTP, with the calls run by real containers (test/fixtures/calls, deployed as `calls`).
 */
describe('CLI call commands against a real server', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let env: Record<string, string>;
  let manifest: LoadedManifest;
  const reports: unknown[] = [];
  const run = (options: Parameters<typeof capture>[0] = {}) => capture({ env, ...options });
  /** A pickled call of the deployed app, as `svc.Function.from_name("calls", fn).spawn(...)` sends it. */
  const spawn = async (fn: string, args: unknown[]): Promise<string> => {
    const spawned = await call('POST', '/api/v1/calls', {
      token: owner,
      json: { app: 'calls', function: fn, input: pickledCall(args).toString('base64') },
    });
    assert.equal(spawned.status, 202, spawned.text);
    return spawned.json.call.id;
  };
  const spawnJson = async (fn: string, args: Record<string, unknown>): Promise<string> => {
    const spawned = await call('POST', `/api/v1/apps/calls/functions/${fn}/calls`, { token: owner, json: args });
    assert.equal(spawned.status, 202, spawned.text);
    return spawned.json.call_id;
  };
  const ended = async (id: string) => {
    const answer = await call('GET', `/api/v1/calls/${id}/outcome`, { token: owner, headers: { Prefer: 'wait=60' } });
    assert.equal(answer.status, 200, answer.text);
  };

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    env = { SVC_SERVER: platform.url, SVC_TOKEN: owner };
    manifest = await loadManifest({ target: path.join(FIXTURE, 'app.py') });
    const bundle = await bundleOfFolder(FIXTURE);
    assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
    const deployed = await call('POST', '/api/v1/apps/calls/deployments', {
      token: owner,
      json: { manifest: manifest.raw, bundle: bundle.sha256 },
    });
    assert.ok([200, 201].includes(deployed.status), deployed.text);
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('svc app calls prints the calls newest first as a table; --status, --limit and --json as the API answers', async () => {
    const squared = await spawn('square', [7]);
    await ended(squared);
    const failed = await spawn('fail', ['no database']);
    await ended(failed);

    const table = run();
    await appCalls(table.context, 'calls');
    const lines = table.stdout().trimEnd().split('\n');
    assert.match(lines[0]!, /^CALL\s+FUNCTION\s+STATUS\s+AGE\s+DURATION\s+ATTEMPT\s+ERROR$/);
    assert.match(lines[1]!, new RegExp(`^${failed}\\s+fail\\s+failed\\s+\\d+[smhd]\\s+\\d+\\.\\ds\\s+1/1\\s+ValueError: no database$`));
    assert.match(lines[2]!, new RegExp(`^${squared}\\s+square\\s+succeeded\\s+\\d+[smhd]\\s+\\d+\\.\\ds\\s+1/1$`));
    assert.equal(lines.length, 3);
    assert.equal(table.stderr(), '');

    const json = run();
    await appCalls(json.context, 'calls', { json: true, status: 'succeeded', limit: '5' });
    const printed = JSON.parse(json.stdout());
    assert.deepEqual(Object.keys(printed), ['calls', 'maps']);
    assert.deepEqual(
      printed.calls.map((c: { id: string; status: string }) => [c.id, c.status]),
      [[squared, 'succeeded']],
    );
    const one = run();
    await appCalls(one.context, 'calls', { limit: '1' });
    assert.equal(one.stdout().trimEnd().split('\n').length, 2);
    const none = run();
    await appCalls(none.context, 'calls', { status: 'queued' });
    assert.equal(none.stdout(), '');
    assert.match(none.stderr(), /no queued call of calls is kept/);

    assert.match(
      (await rejectsWith(appCalls(run().context, 'calls', { status: 'done' }))).message,
      /not a call status; it is one of queued/,
    );
    assert.match((await rejectsWith(appCalls(run().context, 'calls', { limit: '0' }))).message, /not a whole number from 1 to 1000/);
    assert.equal((await rejectsWith(appCalls(run().context, 'nope'))).code, 'not_found');
  });

  it("svc app calls lists the app's maps after its calls, with their inputs by where they are; --json has them", async () => {
    const run = (await call('POST', '/api/v1/runs', { token: owner, json: { app: 'calls', function: 'square' } })).json.run.id;
    const created = await call('POST', `/api/v1/runs/${run}/maps`, { token: owner, json: {} });
    assert.equal(created.status, 201, created.text);
    const map = created.json.map.id;
    const printed = capture({ env });
    await appCalls(printed.context, 'calls');
    const lines = printed.stdout().trimEnd().split('\n');
    const header = lines.findIndex((line) =>
      /^MAP\s+FUNCTION\s+STATUS\s+AGE\s+SUCCEEDED\s+FAILED\s+RUNNING\s+QUEUED\s+CANCELLED$/.test(line),
    );
    assert.ok(header > 0, printed.stdout());
    assert.match(lines[header + 1]!, new RegExp(`^${map}\\s+square\\s+running\\s+\\d+[smhd]\\s+0\\s+0\\s+0\\s+0\\s+0$`));
    const json = capture({ env });
    await appCalls(json.context, 'calls', { json: true });
    assert.deepEqual(
      JSON.parse(json.stdout()).maps.map((m: { id: string }) => m.id),
      [map],
    );
    assert.equal((await call('DELETE', `/api/v1/runs/${run}`, { token: owner })).status, 204);
  });

  it("svc call get prints one call, with a JSON call's result; --json as the API answers", async () => {
    const id = await spawnJson('shift', { p: { x: 1, y: 2 }, by: 10 });
    await ended(id);
    const shown = run();
    await callGet(shown.context, id);
    const text = shown.stdout();
    for (const line of [
      `call      ${id}`,
      'app       calls',
      'function  shift',
      'status    succeeded',
      'attempt   1 of 1',
      'result    {"x":11,"y":12}',
    ])
      assert.ok(text.includes(`${line}\n`), `${line} in:\n${text}`);
    assert.match(text, /^error {5}-$/m);
    const json = run();
    await callGet(json.context, id, { json: true });
    assert.deepEqual(JSON.parse(json.stdout()).call.result, { x: 11, y: 12 });
    assert.equal((await rejectsWith(callGet(run().context, 'call-0123456789abcdef0123'))).code, 'not_found');
    assert.equal((await rejectsWith(callGet(run().context, 'nope'))).code, 'bad_request');
  });

  it('svc call logs prints what the call printed, stdout on stdout and stderr on stderr; --json as the API answers', async () => {
    const id = await spawnJson('chatty', { lines: 2 });
    await ended(id);
    const shown = run();
    await callLogs(shown.context, id);
    assert.equal(shown.stdout(), 'line 0\nline 1\n');
    assert.match(shown.stderr(), /^done printing$/m);
    const json = run();
    await callLogs(json.context, id, { json: true });
    assert.deepEqual(
      JSON.parse(json.stdout()).lines.map((l: { stream: string; line: string }) => `${l.stream}: ${l.line}`),
      ['stdout: line 0', 'stdout: line 1', 'stderr: done printing'],
    );
    const silent = run();
    await callLogs(silent.context, await spawnJson('shift', { p: { x: 0, y: 0 } }));
    assert.equal(silent.stdout(), '');
    assert.equal((await rejectsWith(callLogs(run().context, 'call-0123456789abcdef0123'))).code, 'not_found');
  });

  it('svc call wait exits 0 with the JSON result, 1 when the call failed or was cancelled, 2 when --timeout passes first', async () => {
    const shifted = run();
    assert.equal(await callWait(shifted.context, await spawnJson('shift', { p: { x: 0, y: 0 } })), 0);
    assert.equal(shifted.stdout(), '{"x":1,"y":1}\n');
    assert.match(shifted.stderr(), /call-[0-9a-f]{20} succeeded/);

    const pickled = run();
    assert.equal(await callWait(pickled.context, await spawn('square', [3]), { timeout: '60' }), 0);
    assert.equal(pickled.stdout(), '', 'a pickled result is for Python: nothing on stdout');

    const failing = run();
    const failed = await spawn('fail', ['boom']);
    assert.equal(await callWait(failing.context, failed), 1);
    assert.equal(failing.stdout(), '');
    assert.match(failing.stderr(), /raise ValueError\(message\)/);
    assert.match(failing.stderr(), new RegExp(`${failed} failed: ValueError: boom`));

    // Held by its gate until cancelled: the wait times out (2), the cancel ends it, a second cancel is refused.
    const gated = await spawn('gated-once', [path.join(tempDir('svc-gate-'), 'never')]);
    const timedOut = run();
    assert.equal(await callWait(timedOut.context, gated, { timeout: '0' }), 2);
    assert.match(timedOut.stderr(), new RegExp(`${gated} is still (queued|running) after --timeout 0`));
    const cancelled = run();
    await callCancel(cancelled.context, gated);
    assert.match(cancelled.stderr(), new RegExp(`cancelled ${gated}`));
    const again = await rejectsWith(callCancel(run().context, gated));
    assert.equal(again.code, 'conflict');
    assert.match(again.message, /has ended already \(cancelled\)/);
    const afterCancel = run();
    assert.equal(await callWait(afterCancel.context, gated), 1);
    assert.match(afterCancel.stderr(), /was cancelled before it ended/);
    assert.equal((await rejectsWith(callWait(run().context, gated, { timeout: 'soon' }))).code, 'usage_invalid');
  });

  it('svc app calls --follow prints the new and changed calls until stopped', async () => {
    const gate = path.join(tempDir('svc-gate-'), 'open');
    // Asks again every 20 ms rather than every second: the test waits for what it prints, never for a time.
    const followed = run({ sleep: (ms) => sleep(Math.min(ms, 20)) });
    const following = appCalls(followed.context, 'calls', { follow: true });
    await followed.waitFor(/following/);
    assert.match(followed.stdout(), /^CALL\s+FUNCTION/);
    const id = await spawn('gated-once', [gate]);
    await followed.waitFor(new RegExp(`${id}\\s+gated-once\\s+(queued|running)`), 'stdout');
    writeFileSync(gate, '');
    await followed.waitFor(new RegExp(`${id}\\s+gated-once\\s+succeeded\\s+\\d+[smhd]\\s+\\d+\\.\\ds\\s+1/1`), 'stdout');
    followed.stop();
    await following;
    // Each change once: the calls printed first are not printed again.
    const printed = followed
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('call-'));
    assert.equal(new Set(printed).size, printed.length, printed.join('\n'));
    assert.equal(printed.filter((line) => /\ssucceeded\s/.test(line) && line.startsWith(id)).length, 1);
  });
});
