import assert from 'node:assert/strict';
import { csvFields, parseNvidiaSmiCsv } from '../../../../core/model/gpus/nvidia-smi-csv.js';

/** What nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv prints on a machine with two GPUs. */
const twoGpus = `index, uuid, name, memory.total [MiB]
0, GPU-5c1a0b7e-2f3d-4c4e-9a1b-0e7d3f2a6b11, NVIDIA H200, 143771 MiB
1, GPU-8f2e4d6c-1a3b-4c5d-8e7f-9a0b1c2d3e4f, NVIDIA A100-SXM4-80GB, 81920 MiB
`;

describe('parseNvidiaSmiCsv()', () => {
  it("reads nvidia-smi's CSV, header line included, each GPU with svc's model", () => {
    assert.deepEqual(parseNvidiaSmiCsv(twoGpus), [
      { index: 0, uuid: 'GPU-5c1a0b7e-2f3d-4c4e-9a1b-0e7d3f2a6b11', name: 'NVIDIA H200', memoryMiB: 143771, model: 'H200' },
      { index: 1, uuid: 'GPU-8f2e4d6c-1a3b-4c5d-8e7f-9a0b1c2d3e4f', name: 'NVIDIA A100-SXM4-80GB', memoryMiB: 81920, model: 'A100-80GB' },
    ]);
  });

  it('finds the columns by their header, takes quotes, CRLF, a BOM, blank lines and [N/A] memory', () => {
    const text = '\uFEFFname,memory.total [MiB],uuid,index\r\n\r\n"NVIDIA A100, PCIe", [N/A] ,GPU-1,3\r\n';
    assert.deepEqual(parseNvidiaSmiCsv(text), [{ index: 3, uuid: 'GPU-1', name: 'NVIDIA A100, PCIe', memoryMiB: null, model: 'A100' }]);
    assert.deepEqual(csvFields(' a , "b ""c"" ,d" ,e'), ['a', 'b "c" ,d', 'e']);
  });

  it('reads no GPUs from an empty file or a header alone', () => {
    assert.deepEqual(parseNvidiaSmiCsv(''), []);
    assert.deepEqual(parseNvidiaSmiCsv('index, uuid, name, memory.total [MiB]\n'), []);
  });

  it('names the line and the fault of a file it cannot read', () => {
    const header = 'index, uuid, name, memory.total [MiB]\n';
    const cases: [string, RegExp][] = [
      ['index, name\n0, T4\n', /line 1 lacks the columns uuid, memory\.total: the first line is the header of nvidia-smi --query-gpu/],
      [`${header}x, GPU-1, T4, 1 MiB\n`, /line 2 \("x, GPU-1, T4, 1 MiB"\): index "x" is not a whole number$/],
      [`${header}0, 1234, T4, 1 MiB\n`, /line 2 .*: uuid "1234" is not a GPU UUID/],
      [`${header}0, GPU-1, T4, 15 GB\n`, /line 2 .*: memory\.total "15 GB" is not "<integer> MiB"$/],
      [`${header}0, GPU-1, T4, 1 MiB\n1, GPU-1, T4, 1 MiB\n`, /line 3 .*: uuid GPU-1 is listed twice$/],
      [`${header}0, GPU-1\n`, /line 2 .*: has 2 fields, the header 4$/],
    ];
    for (const [text, message] of cases) assert.throws(() => parseNvidiaSmiCsv(text), message);
  });
});
