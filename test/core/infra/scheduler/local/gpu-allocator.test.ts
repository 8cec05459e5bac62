import assert from 'node:assert/strict';
import type { SvcError } from '../../../../../core/model/errors.js';
import { parseNvidiaSmiCsv } from '../../../../../core/model/gpus/nvidia-smi-csv.js';
import {
  chooseGpus,
  GpuAllocator,
  type GpuAsk,
  type GpuGrant,
  gpuEnv,
  grantText,
} from '../../../../../core/infra/scheduler/local/gpu-allocator.js';

/** Two H100s, two L4s and an A100 80GB, as nvidia-smi lists them. */
const devices = parseNvidiaSmiCsv(`index, uuid, name, memory.total [MiB]
0, GPU-h0, NVIDIA H100 80GB HBM3, 81559 MiB
1, GPU-l1, NVIDIA L4, 23034 MiB
2, GPU-h2, NVIDIA H100 80GB HBM3, 81559 MiB
3, GPU-l3, NVIDIA L4, 23034 MiB
4, GPU-a4, NVIDIA A100-SXM4-80GB, 81920 MiB
`);

const ask = (models: string[], count = 1, holder = 'c', unit = 'u'): GpuAsk => ({
  request: { models, count },
  holder,
  workload: 'w',
  unit,
});
const uuids = (grant: GpuGrant | undefined) => grant?.devices.map((d) => d.uuid);
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('GpuAllocator', () => {
  it('tells each model free and busy, who holds them, and the waiters in order with the models each may take', async () => {
    const gpus = new GpuAllocator(devices);
    const signal = new AbortController().signal;
    await gpus.take(ask(['H100'], 2, 'a'), signal);
    await gpus.take(ask(['L4'], 1, 'b'), signal);
    void gpus.take(ask(['H100', 'A100'], 2, 'c', 'u1'), signal);
    void gpus.take(ask(['any'], 2, 'd', 'u2'), signal);
    await settled();
    const state = gpus.state();
    assert.deepEqual(state.models, [
      { model: 'H100', free: 0, busy: 2, holders: ['a'] },
      { model: 'L4', free: 1, busy: 1, holders: ['b'] },
      { model: 'A100-80GB', free: 1, busy: 0, holders: [] },
    ]);
    assert.deepEqual(state.waiting, [
      { container: 'c', unit: 'u1', request: 'H100 | A100 ×2', models: ['H100', 'A100-80GB'] },
      { container: 'd', unit: 'u2', request: 'any ×2', models: ['H100', 'L4', 'A100-80GB'] },
    ]);
    assert.equal(state.held.get('GPU-l1'), 'b');
  });

  it('gives each container its own GPUs, of the first model of its list that has enough free', async () => {
    const gpus = new GpuAllocator(devices);
    const signal = new AbortController().signal;
    const h = await gpus.take(ask(['H100'], 2, 'a'), signal);
    assert.deepEqual(uuids(h), ['GPU-h0', 'GPU-h2']);
    assert.equal(h!.model, 'H100');
    // The H100s are taken: the fallback list goes on to the A100, in its order.
    const fallback = await gpus.take(ask(['H100', 'A100', 'L4'], 1, 'b'), signal);
    assert.deepEqual([fallback!.requested, fallback!.model, uuids(fallback)], ['A100', 'A100-80GB', ['GPU-a4']]);
    assert.equal(grantText(fallback!), 'GPU 4 (GPU-a4): A100-80GB for A100 in its gpu list', 'the log says which model of the list it got');
    const any = await gpus.take(ask(['any'], 2, 'c'), signal);
    assert.deepEqual(uuids(any), ['GPU-l1', 'GPU-l3']);
    assert.deepEqual([...gpus.held.values()].sort(), ['a', 'a', 'b', 'c', 'c']);
    assert.equal(new Set(gpus.held.keys()).size, devices.length, 'no GPU twice');
  });

  it('keeps a request that must wait waiting, and grants it when a container gives its GPUs back', async () => {
    const gpus = new GpuAllocator(devices.filter((d) => d.model === 'L4'));
    const signal = new AbortController().signal;
    const first = await gpus.take(ask(['L4'], 1, 'a'), signal);
    const second = await gpus.take(ask(['L4'], 1, 'b'), signal);
    let waitedFor: string[] = [];
    let third: GpuGrant | undefined;
    void gpus.take(ask(['L4'], 1, 'c'), signal, (holders) => (waitedFor = holders)).then((grant) => (third = grant));
    await settled();
    assert.deepEqual(waitedFor, ['a', 'b']);
    assert.equal(third, undefined);
    assert.equal(gpus.waiting, 1);
    second!.release();
    second!.release(); // twice: gives back once
    await settled();
    assert.deepEqual(uuids(third), uuids(second));
    assert.equal(gpus.held.get(third!.devices[0]!.uuid), 'c');
    assert.equal(gpus.waiting, 0);
    first!.release();
    assert.equal(gpus.held.size, 1);
  });

  it('serves waiters first come first served: a later small request does not take what an earlier large one waits for', async () => {
    const l4s = devices.filter((d) => d.model === 'L4');
    const gpus = new GpuAllocator([...l4s, devices[4]!]);
    const signal = new AbortController().signal;
    const a = await gpus.take(ask(['L4'], 1, 'a'), signal);
    const order: string[] = [];
    void gpus.take(ask(['L4'], 2, 'big'), signal).then(() => order.push('big'));
    void gpus.take(ask(['L4'], 1, 'small'), signal).then(() => order.push('small'));
    // A request for a model the first waiter cannot use is not held up by it.
    const other = await gpus.take(ask(['A100'], 1, 'other'), signal);
    assert.deepEqual(uuids(other), ['GPU-a4']);
    await settled();
    assert.deepEqual(order, [], 'the free L4 is kept for big, which needs two');
    a!.release();
    await settled();
    assert.deepEqual(order, ['big']);
  });

  it('stops waiting when the container is stopped, and lets the next waiter have the GPUs', async () => {
    const gpus = new GpuAllocator([devices[1]!]);
    const held = await gpus.take(ask(['L4'], 1, 'a'), new AbortController().signal);
    const stop = new AbortController();
    const cancelled = gpus.take(ask(['L4'], 1, 'b'), stop.signal);
    const next = gpus.take(ask(['any'], 1, 'c'), new AbortController().signal);
    stop.abort();
    assert.equal(await cancelled, undefined);
    held!.release();
    assert.deepEqual(uuids(await next), ['GPU-l1']);
  });

  it('refuses at once what the machine could never give, naming its GPUs', async () => {
    const gpus = new GpuAllocator(devices);
    const signal = new AbortController().signal;
    await assert.rejects(gpus.take(ask(['H200']), signal), (error: SvcError) => {
      assert.equal(error.code, 'gpu_unavailable');
      assert.match(error.message, /asks for gpu H200, but this platform has no H200\. Its GPUs: 0: H100/);
      return true;
    });
    await assert.rejects(gpus.take(ask(['H100'], 3), signal), /has 2 H100, not 3/);
    await assert.rejects(new GpuAllocator([]).take(ask(['any']), signal), /has no GPU\. Its GPUs: none/);
  });

  it('prefers GPUs of one model for a request that several would meet', () => {
    const mixed = parseNvidiaSmiCsv(`index, uuid, name, memory.total [MiB]
0, GPU-x0, NVIDIA A100-SXM4-40GB, 40960 MiB
1, GPU-x1, NVIDIA A100-SXM4-80GB, 81920 MiB
2, GPU-x2, NVIDIA A100-SXM4-80GB, 81920 MiB
`);
    assert.deepEqual(
      chooseGpus({ models: ['A100'], count: 2 }, mixed)?.devices.map((d) => d.uuid),
      ['GPU-x1', 'GPU-x2'],
    );
    assert.deepEqual(
      chooseGpus({ models: ['any'], count: 1 }, mixed)?.devices.map((d) => d.uuid),
      ['GPU-x0'],
    );
    assert.equal(chooseGpus({ models: ['A100'], count: 4 }, mixed), null);
  });

  it("writes a container's environment: its GPUs by UUID, none for the others on a GPU machine", async () => {
    const grant = await new GpuAllocator(devices).take(ask(['H100', 'L4'], 2), new AbortController().signal);
    assert.deepEqual(gpuEnv(grant, true), {
      CUDA_VISIBLE_DEVICES: 'GPU-h0,GPU-h2',
      NVIDIA_VISIBLE_DEVICES: 'GPU-h0,GPU-h2',
      SVC_GPU_MODEL: 'H100',
    });
    assert.deepEqual(gpuEnv(undefined, true), { CUDA_VISIBLE_DEVICES: '', NVIDIA_VISIBLE_DEVICES: 'void' });
    assert.deepEqual(gpuEnv(undefined, false), {});
    assert.equal(grantText(grant!), 'GPUs 0 (GPU-h0), 2 (GPU-h2): H100');
  });
});
