import assert from 'node:assert/strict';
import { ANY_GPU, canonicalModel, gpuMatches, gpuModelPattern, modelOfGpu, readGpuModel } from '../../../../core/model/gpus/gpu-names.js';

/** Names as NVIDIA's driver reports them (nvidia-smi, NVML, Nomad's `${device.model}`), with their memory. */
const reported: readonly (readonly [string, number | null])[] = [
  ['NVIDIA H100 80GB HBM3', 81559],
  ['NVIDIA H100 PCIe', 81559],
  ['NVIDIA H100 NVL', 95830],
  ['NVIDIA H200', 143771],
  ['NVIDIA A100-SXM4-80GB', 81920],
  ['NVIDIA A100-SXM4-40GB', 40960],
  ['NVIDIA A100-PCIE-40GB', 40536],
  ['NVIDIA A100 80GB PCIe', 81920],
  ['NVIDIA L4', 23034],
  ['NVIDIA L40', 46068],
  ['NVIDIA L40S', 46068],
  ['Tesla T4', 15360],
  ['NVIDIA A10G', 23028],
  ['NVIDIA A10', 23028],
  ['NVIDIA GeForce RTX 4090', 24564],
  ['NVIDIA RTX A6000', 49140],
  ['Quadro RTX 8000', 46080],
  ['NVIDIA B200', null],
];

describe('GPU model names', () => {
  it('give each GPU the model svc shows: the family, with its size for the A100', () => {
    const models = reported.map(([name, memory]) => modelOfGpu(name, memory));
    assert.deepEqual(models, [
      'H100',
      'H100',
      'H100',
      'H200',
      'A100-80GB',
      'A100-40GB',
      'A100-40GB',
      'A100-80GB',
      'L4',
      'L40',
      'L40S',
      'T4',
      'A10G',
      'A10',
      'RTX-4090',
      'RTX-A6000',
      'RTX-8000',
      'B200',
    ]);
  });

  it('bring every spelling of a requested model to the manifest form', () => {
    const cases: Record<string, string | null> = {
      H100: 'H100',
      h100: 'H100',
      'nvidia h100': 'H100',
      'a100 80gb': 'A100-80GB',
      'A100-80G': 'A100-80GB',
      A100_40GB: 'A100-40GB',
      rtx4090: 'RTX-4090',
      'RTX 4090': 'RTX-4090',
      'Tesla T4': 'T4',
      Any: ANY_GPU,
      '80GB': null,
      '': null,
    };
    for (const [spelled, canonical] of Object.entries(cases)) assert.equal(canonicalModel(spelled), canonical, spelled);
    assert.deepEqual(readGpuModel('NVIDIA A100-SXM4-80GB'), { family: 'A100', memoryGB: 80 });
  });

  it('match a request to the GPUs of its family, and of its size when it says one', () => {
    const matching = (requested: string) => reported.filter(([name, memory]) => gpuMatches(requested, name, memory)).map(([name]) => name);
    assert.deepEqual(matching('H100'), ['NVIDIA H100 80GB HBM3', 'NVIDIA H100 PCIe', 'NVIDIA H100 NVL']);
    assert.deepEqual(matching('A100'), [
      'NVIDIA A100-SXM4-80GB',
      'NVIDIA A100-SXM4-40GB',
      'NVIDIA A100-PCIE-40GB',
      'NVIDIA A100 80GB PCIe',
    ]);
    assert.deepEqual(matching('A100-80GB'), ['NVIDIA A100-SXM4-80GB', 'NVIDIA A100 80GB PCIe']);
    assert.deepEqual(matching('A100-40GB'), ['NVIDIA A100-SXM4-40GB', 'NVIDIA A100-PCIE-40GB']);
    // The size from memory.total when the name has none: 81559 MiB is 80 GB.
    assert.deepEqual(matching('H100-80GB'), ['NVIDIA H100 80GB HBM3', 'NVIDIA H100 PCIe']);
    // Whole families: L4 is not L40, L40 not L40S, A10 not A10G or A100.
    assert.deepEqual(matching('L4'), ['NVIDIA L4']);
    assert.deepEqual(matching('L40'), ['NVIDIA L40']);
    assert.deepEqual(matching('L40S'), ['NVIDIA L40S']);
    assert.deepEqual(matching('A10'), ['NVIDIA A10']);
    assert.deepEqual(matching('T4'), ['Tesla T4']);
    assert.deepEqual(matching('RTX-4090'), ['NVIDIA GeForce RTX 4090']);
    assert.deepEqual(matching('H200'), ['NVIDIA H200']);
    assert.equal(matching(ANY_GPU).length, reported.length);
    assert.deepEqual(matching('V100'), []);
  });

  it("give Nomad a pattern that matches exactly the names the rule matches (without memory.total, which Nomad's model lacks)", () => {
    const requests = [
      'H100',
      'H200',
      'A100',
      'A100-80GB',
      'A100-40GB',
      'L4',
      'L40',
      'L40S',
      'T4',
      'A10',
      'A10G',
      'RTX-4090',
      'RTX-A6000',
      'B200',
    ];
    for (const requested of requests) {
      const pattern = new RegExp(gpuModelPattern(requested), 'i');
      for (const [name] of reported) {
        assert.equal(pattern.test(name), gpuMatches(requested, name), `${requested} against ${name}: ${pattern}`);
      }
    }
    assert.equal(gpuModelPattern('RTX-4090'), '^((NVIDIA|TESLA|GEFORCE|QUADRO)[^A-Za-z0-9]+)*RTX[^A-Za-z0-9]?4090([^A-Za-z0-9]|$)');
  });
});
