import assert from 'node:assert/strict';
import { gpuRequestFits, gpuRequestText, gpuUnavailable } from '../../../../core/model/gpus/gpu-request.js';
import { parseNvidiaSmiCsv } from '../../../../core/model/gpus/nvidia-smi-csv.js';

const devices = parseNvidiaSmiCsv(`index, uuid, name, memory.total [MiB]
0, GPU-aaaa, NVIDIA L4, 23034 MiB
1, GPU-bbbb, NVIDIA L4, 23034 MiB
2, GPU-cccc, NVIDIA A100-SXM4-80GB, 81920 MiB
`);

describe('GPU requests against an inventory', () => {
  it('fit when some model of the list has the count', () => {
    assert.equal(gpuRequestFits({ models: ['L4'], count: 2 }, devices), true);
    assert.equal(gpuRequestFits({ models: ['H100', 'A100'], count: 1 }, devices), true);
    assert.equal(gpuRequestFits({ models: ['any'], count: 3 }, devices), true);
    assert.equal(gpuRequestFits({ models: ['L4'], count: 3 }, devices), false);
    assert.equal(gpuRequestFits({ models: ['any'], count: 4 }, devices), false);
    assert.equal(gpuRequestFits({ models: ['A100-40GB'], count: 1 }, devices), false);
  });

  it('refuse one that never fits with gpu_unavailable, naming what was asked and listing the GPUs', () => {
    assert.equal(gpuUnavailable('w', { models: ['L4'], count: 1 }, devices), null);
    const error = gpuUnavailable('train', { models: ['H100', 'L4'], count: 3 }, devices)!;
    assert.equal(error.code, 'gpu_unavailable');
    assert.equal(error.status, 422);
    assert.equal(
      error.message,
      'the workload train asks for gpu H100 | L4 ×3, but this platform has no H100, 2 L4, not 3. Its GPUs: 0: L4 (NVIDIA L4, 23034 MiB); 1: L4 (NVIDIA L4, 23034 MiB); 2: A100-80GB (NVIDIA A100-SXM4-80GB, 81920 MiB).',
    );
    assert.deepEqual((error.details as { gpus: unknown[] }).gpus.length, 3);
    assert.match(gpuUnavailable('w', { models: ['any'], count: 1 }, [])!.message, /has no GPU\. Its GPUs: none\.$/);
    assert.equal(gpuRequestText({ models: ['any'], count: 1 }), 'any');
  });
});
