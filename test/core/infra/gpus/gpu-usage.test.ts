import assert from 'node:assert/strict';
import path from 'node:path';
import { gpuUsageReader } from '../../../../core/infra/gpus/gpu-usage.js';
import { readGpuInventory } from '../../../../core/infra/gpus/inventory.js';
import { packageRoot } from '../../../../core/model/paths.js';

const fixtures = path.join(packageRoot, 'test', 'fixtures');
/** A stand-in nvidia-smi that prints recorded answers: this machine has no GPU, so NVML itself is not met here. */
const fakeNvidiaSmi = path.join(fixtures, 'fake-nvidia-smi', 'nvidia-smi');

describe('gpuUsageReader', () => {
  it('reads usage through nvidia-smi where the inventory came from it', async () => {
    const inventory = await readGpuInventory(null, fakeNvidiaSmi);
    assert.equal(inventory.devices.length, 2);
    const read = gpuUsageReader(inventory, fakeNvidiaSmi);
    assert.ok(read !== null);
    const usage = await read();
    assert.equal(usage.get('GPU-5c1a0b7e-2f3d-4c4e-9a1b-0e7d3f2a6b11')?.utilization, 0.37);
    assert.equal(await read(), usage, 'a second scrape within seconds reuses the reading');
  });

  it('reads nothing for an inventory from a file (its GPUs are not there) or without GPUs', async () => {
    const fromFile = await readGpuInventory(path.join(fixtures, 'gpu-inventory.csv'));
    assert.equal(gpuUsageReader(fromFile, fakeNvidiaSmi), null);
    assert.equal(gpuUsageReader({ devices: [], source: 'no nvidia-smi on PATH' }), null);
  });

  it('gives an empty reading when nvidia-smi fails at scrape time', async () => {
    const inventory = await readGpuInventory(null, fakeNvidiaSmi);
    const read = gpuUsageReader({ ...inventory, source: '/bin/false' }, '/bin/false');
    assert.equal((await read!()).size, 0);
  });
});
