import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseNvidiaSmiUsage } from '../../../../core/model/gpus/nvidia-smi-usage.js';
import { packageRoot } from '../../../../core/model/paths.js';

/** A recorded answer of nvidia-smi's usage query (not read from a GPU here: none on this machine). */
const recorded = readFileSync(path.join(packageRoot, 'test', 'fixtures', 'nvidia-smi-usage.csv'), 'utf8');

describe('parseNvidiaSmiUsage', () => {
  it("reads each GPU's utilisation as a ratio and its memory in bytes, [N/A] as unknown, and skips lines that are no GPU", () => {
    const usage = parseNvidiaSmiUsage(recorded);
    assert.deepEqual(
      [...usage.values()],
      [
        { uuid: 'GPU-5c1a0b7e-2f3d-4c4e-9a1b-0e7d3f2a6b11', utilization: 0.37, memoryUsedBytes: 1024 * 1024 * 1024 },
        { uuid: 'GPU-8f2e4d6c-1a3b-4c5d-8e7f-9a0b1c2d3e4f', utilization: 0, memoryUsedBytes: 0 },
        { uuid: 'GPU-00000000-0000-0000-0000-000000000002', utilization: null, memoryUsedBytes: null },
      ],
    );
    assert.equal(parseNvidiaSmiUsage('').size, 0);
  });
});
