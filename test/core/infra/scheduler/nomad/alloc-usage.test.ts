import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AllocationUsage } from '../../../../../core/infra/scheduler/nomad/alloc-usage.js';
import { NomadClient } from '../../../../../core/infra/scheduler/nomad/client.js';

/**
 * Usage on Nomad from allocation stats, against an HTTP server answering in the shape Nomad 1.11.3 answers
 * `GET /v1/client/allocation/:id/stats`, with figures chosen here; test/cluster/usage.test.ts compares the
 * real agent's with what a load measured of itself.
 */
describe('AllocationUsage (Nomad allocation stats)', () => {
  let server: Server;
  let client: NomadClient;
  const answers = new Map<
    string,
    { percent: number; rss: number; usage: number; measured: string[] | null; unmeasured?: boolean; delayMs?: number } | 'gone'
  >();
  const asked: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      asked.push(req.url ?? '');
      const id = /^\/v1\/client\/allocation\/([^/]+)\/stats/.exec(req.url ?? '')?.[1] ?? '';
      const answer = answers.get(id);
      if (answer === undefined || answer === 'gone') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`Unknown allocation "${id}"`);
        return;
      }
      const body = {
        ResourceUsage: {
          CpuStats: {
            Measured: ['Percent'],
            Percent: answer.percent,
            SystemMode: 0,
            ThrottledPeriods: 0,
            ThrottledTime: 0,
            TotalTicks: 0,
            UserMode: 0,
          },
          DeviceStats: [],
          MemoryStats: {
            Cache: 0,
            KernelMaxUsage: 0,
            KernelUsage: 0,
            MappedFile: 0,
            MaxUsage: 0,
            Measured: answer.measured,
            RSS: answer.rss,
            Swap: 0,
            Usage: answer.usage,
          },
        },
        // A client that collects no stats answers zeros and no task at all (seen on Nomad 1.11.3).
        Tasks: answer.unmeasured ? {} : { runtime: { Pids: null, ResourceUsage: {}, Timestamp: 1 } },
        Timestamp: answer.unmeasured ? 0 : 1,
      };
      const send = () => res.writeHead(200, { 'Content-Type': 'application/json', 'X-Nomad-Index': '1' }).end(JSON.stringify(body));
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new NomadClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'secret', namespace: 'svc' });
  });
  after(() => server.close());

  it('integrates the CPU rate between samples by its mean, and takes the cgroup memory where Nomad measured it', async () => {
    let now = 0;
    const usage = new AllocationUsage(client, () => now);
    answers.set('a1', { percent: 50, rss: 10, usage: 300, measured: ['RSS', 'Usage'] });
    await usage.sample(['a1']);
    assert.deepEqual(usage.of(['a1']).get('a1'), { cpuSeconds: 0, memoryBytes: 300 }, 'the first sample starts the count');
    now = 5_000;
    await usage.sample(['a1']);
    now = 10_000;
    answers.set('a1', { percent: 0, rss: 20, usage: 0, measured: ['RSS'] });
    await usage.sample(['a1']);
    const used = usage.of(['a1']).get('a1')!;
    assert.equal(used.cpuSeconds, 0.5 * 5 + 0.25 * 5, 'half a core for 5 s, then falling to none over the next 5 s');
    assert.equal(used.memoryBytes, 20, 'the resident set where no cgroup usage was measured');
    assert.ok(
      asked.every((url) => url.includes('namespace=svc')),
      'asked in svc namespace',
    );
  });

  it('keeps what it counted when a sample fails, and forgets allocations no longer listed', async () => {
    let now = 0;
    const usage = new AllocationUsage(client, () => now);
    answers.set('b1', { percent: 100, rss: 1, usage: 1, measured: ['Usage'] });
    await usage.sample(['b1']);
    now = 2_000;
    await usage.sample(['b1']);
    answers.set('b1', 'gone');
    now = 4_000;
    await usage.sample(['b1']);
    assert.equal(usage.of(['b1']).get('b1')!.cpuSeconds, 2);
    await usage.sample([]);
    assert.equal(usage.of(['b1']).size, 0);
  });

  it('reads a busy allocation at every offer and an idle one every 2 s', async () => {
    let now = 0;
    const usage = new AllocationUsage(client, () => now);
    answers.set('busy', { percent: 80, rss: 1, usage: 1, measured: ['Usage'] });
    answers.set('idle', { percent: 0, rss: 1, usage: 1, measured: ['Usage'] });
    const reads = (id: string) => asked.filter((url) => url.includes(`/allocation/${id}/`)).length;
    for (now = 0; now <= 6_000; now += 1_000) await usage.sample(['busy', 'idle']);
    assert.equal(reads('busy'), 7, 'each second while busy');
    assert.equal(reads('idle'), 4, 'at first, then every 2 s');
    const busy = usage.of(['busy']).get('busy');
    assert.ok(busy !== undefined && Math.abs((busy.cpuSeconds ?? 0) - 0.8 * 6) < 1e-9, `0.8 of a core for 6 s: ${busy?.cpuSeconds}`);
  });

  it('tells once of an allocation whose client collects no stats for it, 15 s after its first sample', async () => {
    let now = 0;
    const told: string[] = [];
    const usage = new AllocationUsage(
      client,
      () => now,
      (id) => told.push(id),
    );
    answers.set('quiet', { percent: 0, rss: 0, usage: 0, measured: null, unmeasured: true });
    answers.set('measured', { percent: 0, rss: 5, usage: 0, measured: ['RSS'] });
    for (now = 0; now <= 30_000; now += 5_000) {
      await usage.sample(['quiet', 'measured']);
      if (now === 10_000) assert.deepEqual(told, [], 'not before 15 s: a new allocation may not be measured yet');
    }
    assert.deepEqual(told, ['quiet']);
  });

  it('asks about an allocation once at a time while Nomad is slow, and drops an answer for one no longer listed', async () => {
    let now = 0;
    const usage = new AllocationUsage(client, () => now);
    answers.set('slow', { percent: 90, rss: 1, usage: 1, measured: ['Usage'], delayMs: 300 });
    const reads = () => asked.filter((url) => url.includes('/allocation/slow/')).length;
    const first = usage.sample(['slow']);
    for (now = 1_000; now <= 3_000; now += 1_000) await usage.sample(['slow']);
    await first;
    assert.equal(reads(), 1, 'one request in flight, not one a second');
    const second = usage.sample(['slow']);
    await usage.sample([]); // dropped while it was being asked about
    await second;
    assert.equal(usage.of(['slow']).size, 0, 'its late answer did not bring it back');
  });
});
