import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SvcError } from '../../../../core/model/errors.js';
import { createNomadDriver, type NomadDriverOptions } from '../../../../core/infra/scheduler/nomad/driver.js';
import type { NomadContainerStatus, NomadDriver } from '../../../../core/infra/scheduler/nomad/types.js';
import type { LogLine } from '../../../../core/infra/scheduler/types.js';
import { pidsMatching, waitNoneMatching } from '../../../helpers/processes.js';
import { until } from '../../../helpers/until.js';
import { startNomadStandin, type NomadStandin } from '../../../standins/nomad/index.js';
import { fixtureCompile, MARKER, nomadUnit } from './nomad-fixture.js';

const unit = nomadUnit;

async function nomadGet(nomad: NomadStandin, p: string, token?: string): Promise<{ status: number; text: string; json: () => any }> {
  const response = await fetch(nomad.url + p, { headers: token ? { 'X-Nomad-Token': token } : {} });
  const text = await response.text();
  return { status: response.status, text, json: () => JSON.parse(text) };
}

async function rejects(promise: Promise<unknown>, code: string, text?: RegExp): Promise<SvcError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SvcError, `not an SvcError: ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (text) assert.match(error.message, text);
    return error;
  }
  assert.fail(`expected ${code}`);
}

/** What a driver pushes to its LogSink. */
function recorder(): { lines: LogLine[]; sink: (line: LogLine) => void; of: (container: string, stream: LogLine['stream']) => string[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    sink: (line) => void lines.push(line),
    of: (container, stream) => lines.filter((l) => l.container === container && l.stream === stream).map((l) => l.text),
  };
}

/** How long a wait of these tests may last (a bound on a hang, not a timing assertion). */
const WAIT_MS = 60_000;

/** Makes the fixture container print `text` as it is. */
async function print(container: NomadContainerStatus, text: string, to: 'stdout' | 'stderr' = 'stdout'): Promise<void> {
  const response = await fetch(`http://${container.workers[0]!.address}/print?to=${to}`, { method: 'POST', body: text });
  assert.equal(await response.text(), 'ok');
}

describe('Nomad driver (against the Nomad stand-in)', function () {
  this.timeout(120_000);
  let dataDir: string;
  let nomad: NomadStandin;
  let driver: NomadDriver;
  const extra: NomadDriver[] = [];

  function makeDriver(overrides: Partial<NomadDriverOptions> = {}): NomadDriver {
    const made = createNomadDriver({
      url: nomad.url,
      compile: fixtureCompile,
      healthTimeoutMs: 30_000,
      stopTimeoutMs: 30_000,
      blockingWaitMs: 5_000,
      ...overrides,
    });
    extra.push(made);
    return made;
  }

  async function start(aclToken?: string): Promise<void> {
    nomad = await startNomadStandin({ dataDir, ...(aclToken ? { aclToken } : {}) });
  }

  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'nomad-driver-'));
    await start();
    driver = makeDriver();
  });

  afterEach(async () => {
    await Promise.all(extra.splice(0).map((d) => d.close()));
    await nomad.close();
    rmSync(dataDir, { recursive: true, force: true });
    assert.deepEqual(await waitNoneMatching(MARKER, 10_000), [], 'fixture processes outlived the stand-in');
  });

  it('maps unit keys to valid job IDs and keeps the key in Meta', async () => {
    assert.equal(driver.jobId('default/demo/deployed/greet'), 'svc-default--demo--greet');
    assert.equal(driver.jobId('default/demo/preview@7/greet_me'), 'svc-default--demo--greet-me--preview--s7');
    const long = driver.jobId(`default/${'a'.repeat(40)}/deployed@3/${'b'.repeat(40)}`);
    assert.match(long, /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
    assert.ok(long.length <= 63);
    assert.notEqual(long, driver.jobId(`default/${'a'.repeat(40)}/deployed@4/${'b'.repeat(40)}`), 'the hash tells long IDs apart');
    const u = unit('meta');
    await driver.submit(u);
    const job = (await nomadGet(nomad, `/v1/job/${driver.jobId(u.key)}`)).json();
    assert.equal(job.Meta.svc_unit, u.key);
  });

  it('submit registers the job; a re-submit uses check-and-set and keeps the scaled count (PreserveCounts)', async () => {
    const u = unit('api');
    await driver.submit(u);
    const id = driver.jobId(u.key);
    const first = (await nomadGet(nomad, `/v1/job/${id}`)).json();
    assert.equal(first.ID, id);
    assert.equal(first.TaskGroups[0].Count, 0);
    assert.equal(first.Version, 0);
    await driver.scale(u.key, 1);
    // A new version of the unit (its doc changed): registered over the current JobModifyIndex.
    await driver.submit(unit('api', {}, 'second version'));
    const second = (await nomadGet(nomad, `/v1/job/${id}`)).json();
    assert.equal(second.Version, 2, 'the scale was version 1, the re-submit version 2');
    assert.equal(second.Meta.svc_doc, 'second version');
    assert.equal(second.TaskGroups[0].Count, 1, 'PreserveCounts kept the count the scale set');
  });

  it('registers the job again before a cold start (a fresh bundle URL), never while allocations run', async () => {
    // Each compile signs anew, as the real compiler's artifact URL does once its window has passed.
    let signed = 0;
    const signing = makeDriver({
      compile: (u) => {
        const compiled = fixtureCompile(u);
        compiled.Job.Meta = { ...compiled.Job.Meta, signed: String(++signed) };
        return compiled;
      },
    });
    const u = unit('cold', { workers: 1 });
    await signing.submit(u);
    const id = signing.jobId(u.key);
    const metaSigned = async () => (await nomadGet(nomad, `/v1/job/${id}`)).json().Meta.signed as string;
    assert.equal(await metaSigned(), '1');
    await signing.scale(u.key, 1);
    assert.equal(await metaSigned(), '2', 'the cold start registered the job again first');
    await signing.scale(u.key, 2);
    assert.equal(await metaSigned(), '2', 'a scale-up while an allocation runs leaves the job alone (no allocation is replaced)');
    await signing.scale(u.key, 0);
    await signing.scale(u.key, 1);
    assert.equal(await metaSigned(), '3');
    assert.deepEqual(
      signing.status(u.key).map((c) => c.state),
      ['healthy'],
    );
  });

  it("scale to 2 waits until both allocations are healthy; status shows them with their workers' ports", async () => {
    const u = unit('web');
    await driver.submit(u);
    await driver.scale(u.key, 2);
    const status = driver.status(u.key);
    assert.equal(status.length, 2);
    for (const container of status) {
      assert.equal(container.state, 'healthy');
      assert.ok(container.healthyAt instanceof Date);
      assert.deepEqual(
        container.workers.map((w) => w.label),
        ['w0', 'w1'],
      );
      for (const worker of container.workers) {
        assert.equal(
          worker.instanceId,
          `_nomad-task-${container.id}-runtime-${driver.jobId(u.key)}-w${worker.index}`,
          "the ID Nomad gives the worker's Consul service",
        );
        const response = await fetch(`http://${worker.address}/_svc/health`);
        assert.equal(response.status, 200);
        assert.equal(await response.text(), `w${worker.index}`);
      }
    }
    const allocs = (await nomadGet(nomad, `/v1/job/${driver.jobId(u.key)}/allocations`)).json();
    assert.deepEqual(
      allocs
        .filter((a: any) => a.ClientStatus === 'running')
        .map((a: any) => a.ID)
        .sort(),
      status.map((c) => c.id).sort(),
    );
  });

  it("scale beyond the group's Max gives Nomad's text as nomad_rejected", async () => {
    const u = unit('capped');
    await driver.submit(u);
    const error = await rejects(driver.scale(u.key, 5), 'nomad_rejected', /group count was greater than scaling policy maximum: 5 > 3/);
    assert.equal((error.details as any).status, 400);
  });

  it('scale of a unit Nomad does not know is not_found', async () => {
    await rejects(
      driver.scale('default/demo/preview@1/nothing', 1),
      'not_found',
      /no deployment unit default\/demo\/preview@1\/nothing: Nomad answered 404 to GET \/v1\/job\/svc-default--demo--nothing--preview--s1: job not found/,
    );
  });

  it('a container that exits gives container_failed with its last log lines', async () => {
    const u = unit('broken', { workers: 1 });
    await driver.submit(u);
    const error = await rejects(driver.scale(u.key, 1), 'container_failed', /boom: broken cannot start/);
    assert.match(error.message, /\[stdout\] starting/);
  });

  it('stop of one container stops that allocation and lowers the count', async () => {
    const u = unit('stoppable', { workers: 1 });
    await driver.submit(u);
    await driver.scale(u.key, 2);
    const [, second] = driver.status(u.key);
    assert.ok(second && second.allocationName.endsWith('[1]'));
    const port = second.workers[0]!.port;
    await driver.stop(u.key, second.id);
    assert.deepEqual(
      driver
        .status(u.key)
        .map((c) => c.id)
        .includes(second.id),
      false,
    );
    assert.equal(driver.status(u.key).length, 1);
    const job = (await nomadGet(nomad, `/v1/job/${driver.jobId(u.key)}`)).json();
    assert.equal(job.TaskGroups[0].Count, 1);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/_svc/health`));
    await driver.stop(u.key, second.id); // idempotent
    await driver.stop(u.key, 'no-such-allocation');
  });

  it('remove purges the job (404 after) and its processes end; a second remove is fine', async () => {
    const u = unit('gone', { workers: 1 });
    await driver.submit(u);
    await driver.scale(u.key, 1);
    assert.ok(pidsMatching(MARKER).length > 0);
    await driver.remove(u.key);
    assert.equal((await nomadGet(nomad, `/v1/job/${driver.jobId(u.key)}`)).status, 404);
    assert.deepEqual(await waitNoneMatching(MARKER, 10_000), []);
    assert.deepEqual(driver.status(u.key), []);
    await driver.remove(u.key);
  });

  it('retries once when the job was registered behind its back (EnforceIndex conflict)', async () => {
    const u = unit('raced');
    await driver.submit(u);
    const id = driver.jobId(u.key);
    // Someone else registers a new version between the driver's read and its write.
    let raced = false;
    const racing = makeDriver();
    const original = globalThis.fetch;
    globalThis.fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (!raced && init?.method === 'PUT' && url.includes(`/v1/job/${id}`)) {
        raced = true;
        const behind = fixtureCompile(unit('raced', {}, "behind the driver's back")).Job;
        const reply = await original(`${nomad.url}/v1/job/${id}`, { method: 'PUT', body: JSON.stringify({ Job: { ...behind, ID: id } }) });
        assert.equal(reply.status, 200, await reply.text());
      }
      return original(input, init);
    };
    try {
      await racing.submit(unit('raced', {}, "the driver's version"));
    } finally {
      globalThis.fetch = original;
    }
    assert.ok(raced);
    const job = (await nomadGet(nomad, `/v1/job/${id}`)).json();
    assert.equal(job.Meta.svc_doc, "the driver's version");
    assert.equal(job.Version, 2);
  });

  it("sends the ACL token; without it, or with a wrong one, Nomad's 403 is forbidden", async () => {
    await nomad.close();
    await start('s3cret-token');
    const withToken = makeDriver({ token: 's3cret-token' });
    const u = unit('secured', { workers: 1 });
    await withToken.submit(u);
    await withToken.scale(u.key, 1);
    assert.equal(withToken.status(u.key).length, 1);
    await rejects(makeDriver().submit(u), 'forbidden', /Permission denied/);
    // Nomad 1.11 answers an unknown token as it answers none (test/fixtures/agents/).
    await rejects(makeDriver({ token: 'wrong' }).scale(u.key, 0), 'forbidden', /Permission denied/);
    await withToken.remove(u.key);
  });

  it('an unreachable Nomad is scheduler_unreachable', async () => {
    const dead = createNomadDriver({ url: 'http://127.0.0.1:1', compile: fixtureCompile });
    extra.push(dead);
    const error = await rejects(dead.submit(unit('nowhere')), 'scheduler_unreachable', /cannot reach Nomad at http:\/\/127\.0\.0\.1:1/);
    assert.equal(error.status, 503);
  });

  it('close stops watching but never stops or purges jobs', async () => {
    const u = unit('survivor', { workers: 1 });
    const own = makeDriver();
    await own.submit(u);
    await own.scale(u.key, 1);
    await own.close();
    const allocs = (await nomadGet(nomad, `/v1/job/${own.jobId(u.key)}/allocations`)).json();
    assert.equal(allocs.filter((a: any) => a.ClientStatus === 'running').length, 1);
    // A new driver (svc restarted) picks the unit up from Nomad.
    const next = makeDriver();
    await next.scale(u.key, 1);
    assert.equal(next.status(u.key).length, 1);
  });
  describe('logs and exits of allocations', () => {
    it('pushes every stdout and stderr line of an allocation to the sink once, in order, with the allocation ID', async () => {
      const logs = recorder();
      const own = makeDriver({ logs: logs.sink, logPollMs: 50, logReadBytes: 1024 });
      const u = unit('chatty', { workers: 1 });
      await own.submit(u);
      await own.scale(u.key, 1);
      const [c] = own.status(u.key);
      assert.ok(c);
      await print(c, 'first\nsecond\n');
      await print(c, 'oops\r\n', 'stderr');
      await print(c, 'par');
      // Each poll reads stdout, then stderr: once `sync 2` has arrived, a read of stdout has seen `par`.
      await print(c, 'sync 1\n', 'stderr');
      await until('sync 1', () => logs.of(c.id, 'stderr').includes('sync 1'), WAIT_MS);
      await print(c, 'sync 2\n', 'stderr');
      await until('sync 2', () => logs.of(c.id, 'stderr').includes('sync 2'), WAIT_MS);
      assert.deepEqual(logs.of(c.id, 'stdout').slice(1), ['first', 'second'], 'an unfinished line waits for its newline');
      await print(c, 'tial\n');
      // About 24 KiB: many reads of at most 1 KiB.
      const many = Array.from({ length: 400 }, (_, i) => `line ${String(i).padStart(4, '0')} ${'x'.repeat(48)}`);
      await print(c, many.map((line) => `${line}\n`).join(''));
      await print(c, 'end\n');
      await until('the last line', () => logs.of(c.id, 'stdout').includes('end'), WAIT_MS);
      assert.deepEqual(logs.of(c.id, 'stdout'), [`worker 0 on ${c.workers[0]!.port}`, 'first', 'second', 'partial', ...many, 'end']);
      assert.deepEqual(logs.of(c.id, 'stderr'), ['oops', 'sync 1', 'sync 2']);
      assert.ok(logs.lines.every((l) => l.unit === u.key && l.time instanceof Date));
    });

    it('reads an allocation that ends once more: its last lines all arrive', async () => {
      const logs = recorder();
      const exits: string[] = [];
      // Polls are a minute apart: only the reads when the allocation starts and when it ends happen.
      const own = makeDriver({ logs: logs.sink, logPollMs: 60_000, logReadBytes: 1024, onContainerExit: (_unit, id) => exits.push(id) });
      const u = unit('ending', { workers: 1 });
      await own.submit(u);
      await own.scale(u.key, 1);
      const [c] = own.status(u.key);
      assert.ok(c);
      await fetch(`http://${c.workers[0]!.address}/exit?lines=300&code=3`).catch(() => undefined);
      await until('the last line', () => logs.of(c.id, 'stdout').includes('last 299'), WAIT_MS);
      assert.deepEqual(logs.of(c.id, 'stdout'), [
        `worker 0 on ${c.workers[0]!.port}`,
        ...Array.from({ length: 300 }, (_, k) => `last ${k}`),
      ]);
      await until('the exit', () => exits.length > 0, WAIT_MS);
      assert.deepEqual(exits, [c.id]);
    });

    it('a driver that finds the job running (svc restarted) does not replay the lines printed before', async () => {
      const u = unit('restarted', { workers: 1 });
      const before = makeDriver();
      await before.submit(u);
      await before.scale(u.key, 1);
      const [c] = before.status(u.key);
      assert.ok(c);
      await print(c, `${Array.from({ length: 100 }, (_, i) => `old ${i}\n`).join('')}half `);
      await before.close();
      const logs = recorder();
      // Reads of 128 bytes: finding the end of the ~800 bytes already written takes several probes.
      const after = makeDriver({ logs: logs.sink, logPollMs: 50, logReadBytes: 128 });
      await after.scale(u.key, 1);
      await until('the note that earlier lines are not read again', () => logs.of(c.id, 'system').length > 0, WAIT_MS);
      assert.match(logs.of(c.id, 'system')[0]!, /not read again .*nomad alloc logs/);
      await print(c, 'line\nnew\n');
      await print(c, 'err\n', 'stderr');
      await until('the new lines', () => logs.of(c.id, 'stdout').includes('new') && logs.of(c.id, 'stderr').includes('err'), WAIT_MS);
      assert.deepEqual(logs.of(c.id, 'stdout'), ['half line', 'new'], 'the unfinished line arrives whole');
      assert.deepEqual(logs.of(c.id, 'stderr'), ['err']);
    });

    it("notices that Nomad's offsets moved (it deleted the oldest rotated log file) and loses no line", async () => {
      const logs = recorder();
      const own = makeDriver({ logs: logs.sink, logPollMs: 50, logReadBytes: 4096 });
      const u = unit('rotated', { workers: 1 });
      await own.submit(u);
      await own.scale(u.key, 1);
      const [c] = own.status(u.key);
      assert.ok(c);
      const first = Array.from({ length: 40 }, (_, i) => `a ${String(i).padStart(2, '0')} ${'y'.repeat(60)}`);
      await print(c, first.map((line) => `${line}\n`).join(''));
      await until('the a lines', () => logs.of(c.id, 'stdout').includes(first.at(-1)!), WAIT_MS);
      // Once Nomad deletes a stream's oldest rotated file (client/logmon/logging/rotator.go
      // purgeOldFiles), every origin=start offset moves on by that file's size while the later
      // files stay. The stand-in writes one file, so the test cuts bytes off its head (the task
      // appends with O_APPEND); most of what was read stays, as the later files would.
      const file = path.join(dataDir, 'alloc', c.id, 'alloc', 'logs', 'runtime.stdout.0');
      writeFileSync(file, readFileSync(file).subarray(200));
      await print(c, 'b 0\nb 1\n');
      await until('b 1', () => logs.of(c.id, 'stdout').includes('b 1'), WAIT_MS);
      assert.deepEqual(logs.of(c.id, 'stdout'), [`worker 0 on ${c.workers[0]!.port}`, ...first, 'b 0', 'b 1']);
      assert.deepEqual(logs.of(c.id, 'system'), []);
    });

    it('calls onContainerExit once when a healthy allocation is killed (SIGKILL), never for a scale-down or remove', async () => {
      const exits: { key: string; id: string; reason: string }[] = [];
      const logs = recorder();
      const own = makeDriver({ logs: logs.sink, onContainerExit: (u, id, reason) => exits.push({ key: u.key, id, reason }) });
      const u = unit('killed', { workers: 1 });
      await own.submit(u);
      await own.scale(u.key, 2);
      const [victim] = own.status(u.key);
      assert.ok(victim);
      // The task's command line ends with its allocation ID; the stand-in runs it as its own process group.
      const pids = pidsMatching(victim.id);
      assert.equal(pids.length, 1);
      process.kill(pids[0]!, 'SIGKILL');
      await until('the exit', () => exits.length > 0, WAIT_MS);
      assert.equal(exits.length, 1);
      assert.equal(exits[0]!.key, u.key);
      assert.equal(exits[0]!.id, victim.id);
      assert.match(exits[0]!.reason, /^exited unexpectedly: Nomad allocation failed \(Failed tasks\): Exit Code: 0, Signal: 9/);
      assert.ok(logs.of(victim.id, 'system').some((line) => line.includes(exits[0]!.reason)));
      await own.scale(u.key, 0);
      await own.scale(u.key, 1);
      await own.remove(u.key);
      assert.equal(exits.length, 1, 'svc stopped the others');
    });

    it('log read errors never throw: an unreachable Nomad is reported once, then reads back off', async () => {
      const logs = recorder();
      const own = makeDriver({ logs: logs.sink, logPollMs: 50 });
      const u = unit('outage', { workers: 1 });
      await own.submit(u);
      await own.scale(u.key, 1);
      const [c] = own.status(u.key);
      assert.ok(c);
      await until('the first line', () => logs.of(c.id, 'stdout').length > 0, WAIT_MS);
      let failed = 0;
      let gone = 0;
      const original = globalThis.fetch;
      globalThis.fetch = async (input, init) => {
        const logRead = String(input instanceof Request ? input.url : input).includes('/v1/client/fs/logs/');
        try {
          const response = await original(input, init);
          if (logRead && response.status === 404) gone += 1;
          return response;
        } catch (error) {
          if (logRead) failed += 1;
          throw error;
        }
      };
      const reported = () => logs.of(c.id, 'system').filter((line) => line.startsWith('cannot read the logs'));
      try {
        const port = Number(new URL(nomad.url).port);
        await nomad.close();
        await until('three failed reads', () => failed >= 3, WAIT_MS);
        assert.equal(reported().length, 1);
        assert.match(reported()[0]!, /cannot reach Nomad/);
        // Another cluster at the same address: it does not know the allocation (404).
        nomad = await startNomadStandin({ dataDir, port });
        await until('a read of the unknown allocation', () => gone > 0, WAIT_MS);
      } finally {
        globalThis.fetch = original;
      }
      assert.equal(reported().length, 1);
    });
  });
});
