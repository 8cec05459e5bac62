/**
 * Maps of remote runs through the real API, with real containers
 * (test/fixtures/runs/ok): results streamed with their indices, the routes'
 * refusals, the window's backpressure, the backlog scaling the run's
 * containers to max_containers, DELETE, the run's end, and a map nobody reads.
 * Waits are on things the test controls (the `gate` function returns once the
 * test creates its file), never on time.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { checkAnswer } from '../core/http/api/answer-check.js';
import { tokenFor } from '../core/http/api/platform.js';
import { tempDir } from '../helpers/config.js';
import { until } from '../helpers/until.js';
import { MapManager } from '../../core/services/maps/maps.js';
import { sample, scrape } from '../helpers/metrics-text.js';
import { pickledCalls, readyRun, startRunPlatform, unpickledAll, type RunPlatform } from './run-helpers.js';

/** The series of the gate function's maps (the fixture app is `runs`). */
const GATE_LABELS = 'workspace="default",app="runs",function="gate"';

interface MapFrame {
  readonly type: 'log' | 'result' | 'error' | 'end';
  readonly index?: number;
  readonly line?: string;
  readonly pickle?: string | null;
  readonly exception?: string;
  readonly code?: string;
  readonly map?: any;
}

/** The outputs of a map read as they come: the frames so far, and the answer's end. */
interface Reader {
  readonly status: Promise<number>;
  readonly frames: MapFrame[];
  readonly done: Promise<{ status: number; text: string }>;
  close(): void;
}

function readOutputs(baseUrl: string, token: string, id: string): Reader {
  const { hostname, port } = new URL(baseUrl);
  const target = `/api/v1/maps/${id}/outputs`;
  const frames: MapFrame[] = [];
  let resolveStatus!: (status: number) => void;
  const status = new Promise<number>((resolve) => (resolveStatus = resolve));
  const request = http.get({ hostname, port, path: target, agent: false, headers: { authorization: `Bearer ${token}` } });
  const done = new Promise<{ status: number; text: string }>((resolve, reject) => {
    request.on('response', (response) => {
      resolveStatus(response.statusCode!);
      let text = '';
      let rest = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        const lines = (rest + chunk).split('\n');
        rest = lines.pop()!;
        for (const line of lines) if (line !== '') frames.push(JSON.parse(line) as MapFrame);
      });
      response.on('end', () => {
        checkAnswer('GET', target, response.statusCode!, response.headers['content-type'] ?? null, text);
        resolve({ status: response.statusCode!, text });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
  });
  done.catch(() => {});
  return { status, frames, done, close: () => request.destroy() };
}

/** NDJSON lines of inputs `start`, `start + 1`, … with these argument lists. */
function inputLines(argLists: unknown[][], start = 0): string {
  return pickledCalls(argLists)
    .map((pickle, i) => `${JSON.stringify({ index: start + i, pickle })}\n`)
    .join('');
}

describe('API: maps of remote runs (real containers)', function () {
  this.timeout(180_000);
  let runs: RunPlatform;
  let other: string;
  let square: string;
  let gates: string;

  const call = (method: string, target: string, options: Parameters<RunPlatform['call']>[2] = {}) =>
    runs.call(method, target, { token: runs.owner, ...options });
  const createMap = async (run: string) => {
    const created = await call('POST', `/api/v1/runs/${run}/maps`, { json: {} });
    assert.equal(created.status, 201, created.text);
    return created.json.map.id as string;
  };
  const send = (id: string, body: string, query = '', headers: Record<string, string> = {}, token = runs.owner) =>
    call('POST', `/api/v1/maps/${id}/inputs${query}`, { body, token, headers: { 'Content-Type': 'application/x-ndjson', ...headers } });
  const view = async (id: string) => (await call('GET', `/api/v1/maps/${id}`)).json.map;

  before(async () => {
    runs = await startRunPlatform();
    other = (await tokenFor(runs.platform, 'other-team')).secret;
    [square, gates] = await Promise.all([readyRun(runs, 'square'), readyRun(runs, 'gate')]);
  });
  after(async () => runs?.platform.close());
  afterEach(() => assert.deepEqual(runs.reports, [], 'no unexpected errors'));

  it('answers each input with its frames and its index, then the end frame', async () => {
    const id = await createMap(square);
    const reader = readOutputs(runs.platform.url, runs.owner, id);
    assert.equal(await reader.status, 200);
    const sent = await send(id, inputLines([[0], [1], [2], [3]]));
    assert.equal(sent.status, 202, sent.text);
    assert.equal((await send(id, inputLines([[4], ['x']], 4), '?last=true')).status, 202);
    await reader.done;
    const results = reader.frames.filter((frame) => frame.type === 'result');
    const values = unpickledAll(results.map((frame) => frame.pickle!));
    const byIndex = new Map(results.map((frame, i) => [frame.index, values[i]]));
    assert.deepEqual([...byIndex.keys()].sort(), [0, 1, 2, 3, 4]);
    for (const [index, value] of byIndex) assert.equal(value, index! * index!);
    const [failed] = reader.frames.filter((frame) => frame.type === 'error');
    assert.equal(failed!.index, 5);
    assert.match(failed!.exception!, /^TypeError: can't multiply sequence/);
    const logs = reader.frames.filter((frame) => frame.type === 'log' && frame.line!.startsWith('squaring'));
    assert.deepEqual(logs.map((frame) => frame.line).sort(), [
      'squaring 0',
      'squaring 1',
      'squaring 2',
      'squaring 3',
      'squaring 4',
      'squaring x',
    ]);
    for (const frame of logs) assert.equal(frame.line, `squaring ${frame.index === 5 ? 'x' : frame.index}`);
    const end = reader.frames.at(-1)!;
    assert.equal(end.type, 'end');
    assert.deepEqual(end.map.inputs, { received: 6, queued: 0, running: 0, succeeded: 5, failed: 1, cancelled: 0 });
    assert.equal(end.map.status, 'succeeded');
    assert.equal(end.map.lastReceived, true);
    assert.ok(end.map.endedAt !== null);
    // A reader after the end gets the end frame alone.
    const again = readOutputs(runs.platform.url, runs.owner, id);
    await again.done;
    assert.deepEqual(again.frames, [end]);
    const refused = await send(id, inputLines([[6]], 6));
    assert.equal(refused.status, 409);
    assert.equal(refused.json.error.code, 'conflict');
  });

  it('refuses a batch that breaks a rule and takes nothing of it', async () => {
    const id = await createMap(square);
    const refusal = async (body: string, query = '', headers: Record<string, string> = {}) => {
      const answer = await send(id, body, query, headers);
      assert.equal(answer.status, 400, answer.text);
      return answer.json.error;
    };
    assert.deepEqual((await refusal(inputLines([[1]], 1))).details, { line: 1, index: 1, expected: 0 });
    assert.equal((await send(id, inputLines([[0], [1], [2]]))).status, 202);
    const skipped = await refusal(`${inputLines([[3]], 3)}${inputLines([[5]], 5)}`);
    assert.deepEqual(skipped.details, { line: 2, index: 5, expected: 4 });
    assert.match(skipped.message, /line 2 of the batch has the index 5; the map expects 4 next/);
    const many = Array.from({ length: 1001 }, (_, i) => `${JSON.stringify({ index: 3 + i, pickle: 'gAVLAy4=' })}\n`).join('');
    assert.match((await refusal(many)).message, /more than 1000 inputs/);
    assert.match(
      (await refusal(inputLines([[3]], 3), '', { 'Content-Type': 'application/json' })).message,
      /Content-Type "application\/json"/,
    );
    assert.match((await refusal('{"index": 3, "pickle": "not base64!"}\n')).message, /line 1 of the batch has a pickle that is not base64/);
    assert.match((await refusal('{"index": 3}\n')).message, /not base64/);
    assert.match((await refusal('{"index": 3, "pickle": "gAVLAy4=", "x": 1}\n')).message, /has the field "x"/);
    assert.match((await refusal('[3]\n')).message, /is not a JSON object/);
    assert.match((await refusal(inputLines([[3]], 3), '?last=yes')).message, /last="yes" is not true or false/);
    assert.equal((await view(id)).inputs.received, 3, 'nothing of the refused batches was taken');
    assert.equal((await send(id, '', '?last=true')).status, 202, 'a last batch may be empty');
    assert.equal((await view(id)).lastReceived, true);
    assert.equal((await send(id, inputLines([[3]], 3))).status, 409, 'no input after the last');
    const reader = readOutputs(runs.platform.url, runs.owner, id);
    await reader.done;
    assert.equal(reader.frames.at(-1)!.map.status, 'succeeded');
  });

  it("answers another workspace's map word for word as one that never was, and one reader at a time", async () => {
    const id = await createMap(square);
    const unknown = 'map-0123456789abcdef';
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['GET', '/outputs'],
    ] as const) {
      const mine = await call(method, `/api/v1/maps/${unknown}${suffix}`);
      const theirs = await call(method, `/api/v1/maps/${id}${suffix}`, { token: other });
      assert.equal(mine.status, 404);
      assert.deepEqual(theirs.json, JSON.parse(mine.text.replaceAll(unknown, id)), `${method} ${suffix}`);
    }
    const theirInputs = await send(id, inputLines([[0]]), '', {}, other);
    assert.equal(theirInputs.status, 404);
    assert.equal((await call('POST', `/api/v1/runs/${square}/maps`, { json: {}, token: other })).status, 404, "another workspace's run");
    assert.equal((await call('GET', '/api/v1/maps/map-xyz')).status, 400);
    const first = readOutputs(runs.platform.url, runs.owner, id);
    assert.equal(await first.status, 200);
    const second = await call('GET', `/api/v1/maps/${id}/outputs`);
    assert.equal(second.status, 409);
    assert.equal(second.json.error.code, 'conflict');
    first.close();
    await until('the first reader is gone', async () => (await readOutputs(runs.platform.url, runs.owner, id).status) === 200);
  });

  it('holds a batch while the window is full, scales the run on the backlog, and DELETE cancels what has not started', async () => {
    const gate = path.join(tempDir('svc-map-gate-'), 'open');
    const unit = `default/runs/${gates}/gate`;
    const id = await createMap(gates);
    const reader = readOutputs(runs.platform.url, runs.owner, id);
    let answered = false;
    const batch = send(id, inputLines(Array.from({ length: 40 }, (_, i) => [gate, i]))).finally(() => (answered = true));
    await until('the backlog started max_containers=3 containers', () => runs.platform.autoscaler.status(unit)?.inFlight === 3);
    assert.equal(runs.platform.autoscaler.status(unit)!.containers.length, 3);
    // 2 × max_containers × 1 slot + 16 = 22 dispatched: 3 running, 19 waiting for a slot; the other 18 wait in the batch.
    const load = runs.platform.autoscaler.status(unit)!;
    assert.equal(load.inFlight + load.queued, 22);
    assert.equal(answered, false, 'the batch is answered only once all its inputs are in the window');
    // A slot is taken a moment before its container's answer begins: running counts from the answer.
    const running = await until('3 inputs run', async () => {
      const { inputs } = await view(id);
      return inputs.running === 3 && inputs;
    });
    assert.deepEqual(running, { received: 40, queued: 37, running: 3, succeeded: 0, failed: 0, cancelled: 0 });
    const backlog = await scrape(runs.platform.url, runs.owner);
    assert.equal(sample(backlog, 'svc_map_inputs_queued', GATE_LABELS), 37, backlog);
    assert.equal(sample(backlog, 'svc_map_inputs_running', GATE_LABELS), 3);
    assert.equal((await call('DELETE', `/api/v1/maps/${id}`)).status, 204);
    const held = await batch;
    assert.equal(held.status, 202);
    assert.equal(held.json.map.status, 'cancelled');
    const cancelled = await view(id);
    assert.equal(cancelled.cancelReason, 'deleted');
    assert.deepEqual(cancelled.inputs, { received: 40, queued: 0, running: 3, succeeded: 0, failed: 0, cancelled: 37 });
    assert.equal(cancelled.endedAt, null, 'the inputs running finish first');
    await until('the cancelled calls left the queue', () => runs.platform.autoscaler.status(unit)!.queued === 0);
    writeFileSync(gate, '');
    await reader.done;
    const results = reader.frames.filter((frame) => frame.type === 'result');
    assert.equal(results.length, 3);
    const end = reader.frames.at(-1)!;
    assert.equal(end.type, 'end');
    assert.deepEqual(end.map.inputs, { received: 40, queued: 0, running: 0, succeeded: 3, failed: 0, cancelled: 37 });
    assert.equal(end.map.status, 'cancelled');
    assert.equal((await send(id, inputLines([[gate, 40]], 40))).status, 409);
    // The app's maps, as svc app calls and the dashboard list them: this one, its inputs cancelled.
    const { app } = (await call('GET', `/api/v1/runs/${gates}`)).json.run;
    const listed = (await call('GET', `/api/v1/apps/${app}/maps`)).json.maps.find((map: { id: string }) => map.id === id);
    assert.deepEqual([listed.status, listed.inputs.cancelled, listed.inputs.succeeded], ['cancelled', 37, 3]);
    assert.equal((await call('GET', `/api/v1/apps/${app}/maps`, { token: other })).status, 404, "another workspace's app");
    const ended = await scrape(runs.platform.url, runs.owner);
    assert.equal(
      sample(ended, 'svc_map_inputs_total', `${GATE_LABELS},outcome="succeeded"`),
      3,
      'the answered inputs are counted, not the cancelled',
    );
    assert.equal(sample(ended, 'svc_map_inputs_queued', GATE_LABELS), undefined, 'an ended map has no backlog');
  });

  it('is cancelled when its run ends, and when nobody reads its outputs', async () => {
    const gate = path.join(tempDir('svc-map-gate-'), 'open');
    const run = await readyRun(runs, 'gate');
    const id = await createMap(run);
    const reader = readOutputs(runs.platform.url, runs.owner, id);
    assert.equal(
      (
        await send(
          id,
          inputLines([
            [gate, 0],
            [gate, 1],
          ]),
        )
      ).status,
      202,
    );
    await until('an input runs', async () => (await view(id)).inputs.running >= 1);
    // The run's end waits for its calls in flight (behind the gate): it is not awaited before the gate opens.
    const end = call('DELETE', `/api/v1/runs/${run}`);
    const ended = await until('the map is cancelled', async () => {
      const map = await view(id);
      return map.status === 'cancelled' && map;
    });
    assert.equal(ended.cancelReason, 'run_ended');
    writeFileSync(gate, '');
    assert.equal((await end).status, 204);
    await reader.done;
    assert.equal(reader.frames.at(-1)!.map.status, 'cancelled');

    // Unread: a manager of its own over the platform's runs, with a short unread time.
    const maps = new MapManager({ runs: runs.platform.runs, unreadMs: 200 });
    const unread = maps.create('default', square);
    await maps.inputs('default', unread.id, Buffer.from(inputLines([[1], [2]])), false);
    await until('the unread map is cancelled', () => maps.get('default', unread.id).status === 'cancelled');
    assert.equal(maps.get('default', unread.id).cancelReason, 'unread');
    maps.close();
  });
});
