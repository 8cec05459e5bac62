/**
 * CallGroups over a real (memory) state store and the real CallService: batches reserve their
 * indexes (two at once never share one), each input is a queued call the leader is told of, and
 * the sweep keeps what is still readable. The leader itself is not here: `wake` is recorded.
 */
import assert from 'node:assert/strict';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { parseManifest } from '../../../../core/model/workload/resolve.js';
import { CallGroups } from '../../../../core/services/calls/call-groups.js';
import { CallRecords } from '../../../../core/services/calls/call-records.js';
import { CallService } from '../../../../core/services/calls/calls.js';
import { GroupRecords, memberId } from '../../../../core/services/calls/group-records.js';
import { sampleManifest } from '../../model/workload/manifest/sample-manifest.js';

describe('CallGroups', () => {
  const spec = parseManifest(sampleManifest());
  const fn = spec.workloads.find((workload) => workload.kind === 'function')!.name;

  function setUp(now: () => Date = () => new Date()) {
    const store = createMemoryStateStore();
    const woken: string[] = [];
    const records = new CallRecords(store);
    const calls = new CallService({
      records,
      executor: { wake: (_workspace, id) => woken.push(id), abort: () => {} },
      now,
    });
    const groups = new CallGroups({ groups: new GroupRecords(store), calls, now, resultTtlSeconds: 60 });
    const request = { workspace: 'default', principal: null, spec, function: fn, target: { kind: 'deployed', app: spec.name } as const };
    return { store, woken, groups, request };
  }
  const inputs = (n: number) => Array.from({ length: n }, (_, i) => Buffer.from(`input ${i}`));

  it('numbers batches sent at once one after the other, each input a queued call the leader is told of', async () => {
    const { woken, groups, request } = setUp();
    const first = await groups.create(request, inputs(2), true);
    const id = first.group.id;
    const [a, b] = await Promise.all([groups.add('default', id, inputs(3), true), groups.add('default', id, inputs(3), true)]);
    const indexes = [...first.calls, ...a.calls, ...b.calls].map((call) => [...Array(8).keys()].find((i) => memberId(id, i) === call));
    assert.deepEqual(
      indexes.sort((x, y) => x! - y!),
      [0, 1, 2, 3, 4, 5, 6, 7],
      'no index given twice',
    );
    assert.deepEqual(new Set(woken), new Set([...first.calls, ...a.calls, ...b.calls]));
    const view = await groups.get('default', id);
    assert.deepEqual([view.inputs, view.closed, view.status, view.counts.queued], [8, false, 'running', 8]);
    assert.deepEqual(
      (await groups.members('default', id, 6, 10)).map((call) => call.group!.index),
      [6, 7],
    );
  });

  it('cancels the inputs that have not ended and closes the group; another workspace finds nothing', async () => {
    const { groups, request } = setUp();
    const { group } = await groups.create(request, inputs(3), true);
    assert.equal(await groups.cancel('default', group.id), 3);
    const view = await groups.get('default', group.id);
    assert.deepEqual([view.closed, view.status, view.counts.cancelled], [true, 'cancelled', 3]);
    await assert.rejects(groups.add('default', group.id, inputs(1), false), /is closed/);
    await assert.rejects(groups.get('elsewhere', group.id), /there is no call group/);
  });

  it('keeps a group while an input is kept, and an empty one for as long as a call record is kept', async () => {
    let clock = Date.parse('2026-11-29T00:00:00.000Z');
    const { store, groups, request } = setUp(() => new Date(clock));
    const empty = (await groups.create(request, [], false)).group.id;
    const full = (await groups.create(request, inputs(1), false)).group.id;
    clock += 90_000;
    await groups.sweep();
    assert.ok(await groups.get('default', empty), 'an empty group is kept past a minute');
    await store.deleteTree('calls/');
    await groups.sweep();
    await assert.rejects(groups.get('default', full), /there is no call group/, 'its inputs are gone');
    clock += 2 * 60_000;
    await groups.sweep();
    await assert.rejects(groups.get('default', empty), /there is no call group/);
  });
});
