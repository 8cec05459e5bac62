import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform } from '../../core/platform/platform.js';
import { apiClient } from '../core/http/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { localDriverOf } from '../helpers/local-driver.js';
import { until } from '../helpers/until.js';
import { upload } from './api-lifecycle-helpers.js';
import { bundleOfFolder, callRun, pickledCall, readyRun, unpickled, type Frame, type RunPlatform } from './run-helpers.js';

const fixture = path.join(packageRoot, 'test', 'fixtures', 'timeouts');

/**
 * `timeout=` and `retries=` with real workers (test/fixtures/timeouts): a call
 * past its time-out gets 504 `timeout` (an endpoint) or a `timeout` frame (a
 * remote call), its worker is replaced (a new pid) and the logs say so; a
 * function that fails is run again with back-off, each attempt in the logs.
 * Handlers sleep 30 s against time-outs of 1 s; nothing here is timed.
 */
describe('time-outs and retries (real workers)', function () {
  this.timeout(180_000);
  let runs: RunPlatform;
  let deployment: Deployment;

  const endpointUrl = (name: string) => deployment.workloads.find((w) => w.name === name)!.url!;
  const endpointLines = (workload: string) =>
    runs.platform.deploymentLogs
      .lines({ workspace: DEFAULT_WORKSPACE, app: 'timeouts', stage: 'preview', workload })
      .map((line) => line.text);
  const runLines = async (id: string): Promise<string[]> =>
    (await runs.call('GET', `/api/v1/runs/${id}/logs`, { token: runs.owner })).json.lines.map((line: { text: string }) => line.text);
  const resultOf = (frames: Frame[]) => {
    const last = frames.at(-1)!;
    assert.equal(last.type, 'result', JSON.stringify(last));
    return unpickled(last.pickle!);
  };
  const logFrames = (frames: Frame[]) => frames.filter((frame) => frame.type === 'log').map((frame) => frame.line);
  /** A file a function counts its attempts in. */
  const counter = () => path.join(tempDir('svc-attempts-'), 'count');

  before(async () => {
    const reports: unknown[] = [];
    const platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    const manifest = await loadManifest({ target: path.join(fixture, 'app.py') });
    deployment = await platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'preview',
      principal: null,
    });
    const bundle = await bundleOfFolder(fixture);
    const owner = platform.ownerToken.secret;
    assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
    runs = { platform, call: apiClient(platform.url), owner, manifest, sha256: bundle.sha256, reports };
  });
  after(async () => runs?.platform.close());
  afterEach(() => assert.deepEqual(runs.reports, [], 'no unexpected errors'));

  it('answers an endpoint call past its timeout with 504 timeout, logs it, and serves the next one from a fresh worker', async () => {
    const before = (await (await fetch(endpointUrl('slow'))).json()) as { pid: number };
    const late = await fetch(`${endpointUrl('slow')}?seconds=30`);
    assert.equal(late.status, 504);
    const body = (await late.json()) as { error: { code: string; message: string } };
    assert.deepEqual(Object.keys(body), ['error']);
    assert.equal(body.error.code, 'timeout');
    assert.match(body.error.message, /^slow did not finish within its timeout of 1 s/);

    const driver = localDriverOf(runs.platform);
    const unit = deployment.workloads.find((w) => w.name === 'slow')!.unit!;
    await until('a fresh worker is registered', () => {
      const worker = driver.status(unit)[0]?.workers[0];
      return worker?.registered && worker.pid !== undefined && worker.pid !== before.pid;
    });
    const next = await fetch(endpointUrl('slow'));
    assert.equal(next.status, 200);
    assert.notEqual(((await next.json()) as { pid: number }).pid, before.pid, 'a fresh worker serves');
    // The old worker's stderr reaches the logs on its own way, not with the answers: wait for its line (bounded).
    const said = `slow: GET /slow timed out after 1 s; stopping worker 0 (pid ${before.pid}), a fresh worker replaces it`;
    await until('the old worker said it timed out', () => endpointLines('slow').some((line) => line.includes(said)), {
      timeoutMs: 10_000,
      context: () => endpointLines('slow').join('\n'),
    });
  });

  it('ends a stream that stalls past its timeout with a timeout error event', async () => {
    const answer = await fetch(endpointUrl('stalls'));
    assert.equal(answer.status, 200);
    const text = await answer.text();
    assert.ok(text.startsWith('data: 1\n\n'), text);
    assert.match(text, /event: error\ndata: \{"error": \{"code": "timeout", "message": "stalls did not finish within its timeout of 1 s/);
  });

  it('ends the worker of a handler that blocks its event loop past its timeout, and still answers 504 timeout', async () => {
    const late = await fetch(endpointUrl('blocks'));
    assert.equal(late.status, 504);
    assert.equal(((await late.json()) as { error: { code: string } }).error.code, 'timeout');
    await until('the watchdog line is in the logs', () =>
      endpointLines('blocks').some((line) =>
        /blocks: GET \/blocks timed out after 1 s and blocked the event loop; ending worker 0 \(pid \d+\) now/.test(line),
      ),
    );
  });

  it('answers 504 timeout from the gateway when the container does not answer its own time-out (a stopped worker)', async () => {
    const unit = deployment.workloads.find((w) => w.name === 'slow')!.unit!;
    const driver = localDriverOf(runs.platform);
    await until('slow has a registered worker', () => driver.status(unit)[0]?.workers[0]?.registered === true);
    const { pid } = (await (await fetch(endpointUrl('slow'))).json()) as { pid: number };
    const late = fetch(`${endpointUrl('slow')}?seconds=30`);
    // Frozen, the worker runs neither its event loop nor its watchdog: only the gateway's backstop can answer.
    process.kill(pid, 'SIGSTOP');
    try {
      const answer = await late;
      assert.equal(answer.status, 504);
      assert.equal(((await answer.json()) as { error: { code: string } }).error.code, 'timeout');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  });

  it('ends a remote call with a timeout from the gateway when the container does not answer its own time-out (a stopped worker)', async () => {
    const id = await readyRun(runs, 'sleepy');
    const pid = resultOf((await callRun(runs.platform.url, runs.owner, id, pickledCall([0]))).frames) as number;
    const late = callRun(runs.platform.url, runs.owner, id, pickledCall([30]));
    // Frozen before or after it answered the head: the call gets the 504 or, once answering, a last frame.
    process.kill(pid, 'SIGSTOP');
    try {
      const answer = await late;
      const code = answer.status === 200 ? answer.frames.at(-1)?.code : answer.json.error.code;
      assert.equal(code, 'timeout', JSON.stringify(answer));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  });

  it('ends a remote call past its timeout with a timeout frame, and replaces the worker', async () => {
    const id = await readyRun(runs, 'sleepy');
    const first = resultOf((await callRun(runs.platform.url, runs.owner, id, pickledCall([0]))).frames) as number;
    const late = await callRun(runs.platform.url, runs.owner, id, pickledCall([30]));
    assert.equal(late.status, 200);
    const last = late.frames.at(-1)!;
    assert.deepEqual({ type: last.type, code: last.code }, { type: 'error', code: 'timeout' });
    assert.match(last.exception!, /^timeout: sleepy did not finish within its timeout of 1 s/);
    // The worker says so on its stderr, which reaches the run's logs apart from the answer's frames: it may come just after.
    const said = `sleepy: the call timed out after 1 s; stopping worker 0 (pid ${first})`;
    let lines: string[] = [];
    await until('the worker said it timed out', async () => (lines = await runLines(id)).some((line) => line.includes(said)), {
      timeoutMs: 10_000,
      context: () => lines.join('\n'),
    });
    // The next call waits for the fresh worker (the old one was taken out of service before it stopped listening).
    const next = resultOf((await callRun(runs.platform.url, runs.owner, id, pickledCall([0]))).frames);
    assert.notEqual(next, first, 'a fresh worker runs the next call');
  });

  it('retries a function that fails twice, and reports each of its 3 attempts in the logs and to the caller', async () => {
    const id = await readyRun(runs, 'flaky');
    const answer = await callRun(runs.platform.url, runs.owner, id, pickledCall([counter()]));
    assert.equal(resultOf(answer.frames), 'succeeded on attempt 3');
    const said = [
      'flaky: attempt 1 of 3 failed (RuntimeError: attempt 1 fails); retrying in 0.1 s',
      'flaky: attempt 2 of 3 failed (RuntimeError: attempt 2 fails); retrying in 0.2 s',
      'flaky: attempt 3 of 3 succeeded',
    ];
    const lines = await runLines(id);
    for (const line of said) assert.ok(lines.includes(line), `${line}\nnot in:\n${lines.join('\n')}`);
    assert.deepEqual(
      logFrames(answer.frames).filter((line) => line?.startsWith('svc: ')),
      said.map((line) => `svc: ${line.slice('flaky: '.length)}`),
    );
  });

  it('gives the last error once the retries are exhausted', async () => {
    const id = await readyRun(runs, 'hopeless');
    const answer = await callRun(runs.platform.url, runs.owner, id, pickledCall([counter()]));
    const last = answer.frames.at(-1)!;
    assert.equal(last.type, 'error');
    assert.equal(last.exception, 'ValueError: attempt 2 fails too');
    assert.ok((await runLines(id)).includes('hopeless: attempt 2 of 2 failed (ValueError: attempt 2 fails too); no retries left'));
  });

  it('retries a call whose container died, and one that timed out', async () => {
    const died = await readyRun(runs, 'dies-once');
    assert.equal(resultOf((await callRun(runs.platform.url, runs.owner, died, pickledCall([counter()]))).frames), 'survived');
    assert.ok((await runLines(died)).some((line) => line.startsWith('dies-once: attempt 1 of 2 failed (worker_crashed: ')));

    const slow = await readyRun(runs, 'slow-once');
    const file = counter();
    assert.equal(resultOf((await callRun(runs.platform.url, runs.owner, slow, pickledCall([file]))).frames), 'fast the second time');
    assert.ok(existsSync(file));
    assert.ok(
      (await runLines(slow)).some((line) =>
        line.startsWith('slow-once: attempt 1 of 2 failed (timeout: slow-once did not finish within its timeout of 1 s'),
      ),
    );
  });
});
