import assert from 'node:assert/strict';
import { bindClassParameters } from '../../../../core/model/workload/class-parameters.js';
import { isSvcError } from '../../../../core/model/errors.js';
import type { ClassSpec } from '../../../../core/model/workload/types.js';

const model = {
  name: 'model',
  class: {
    methods: [{ name: 'predict', doc: null, parameters: { type: 'object' }, returns: {} }],
    enter: [],
    exit: null,
    parameters: [
      { name: 'size', type: 'str', default: 'small' },
      { name: 'layers', type: 'int' },
      { name: 'fast', type: 'bool', default: false },
      { name: 'seed', type: 'bytes', default: { base64: 'AA==' } },
    ],
  } satisfies ClassSpec,
};

function refusal(given: unknown, workload: Parameters<typeof bindClassParameters>[0] = model): string {
  try {
    bindClassParameters(workload, given);
  } catch (error) {
    assert.ok(isSvcError(error) && error.code === 'bad_request', String(error));
    return error.message;
  }
  assert.fail('not refused');
}

describe('bindClassParameters()', () => {
  it('fills in the defaults, in the order the class declares them', () => {
    assert.deepEqual(Object.entries(bindClassParameters(model, { seed: { base64: 'AQI=' }, layers: 3 })), [
      ['size', 'small'],
      ['layers', 3],
      ['fast', false],
      ['seed', { base64: 'AQI=' }],
    ]);
  });

  it('refuses what is unknown, missing or of another type, naming the parameter', () => {
    assert.equal(refusal({ layers: 1, sise: 'x' }), 'model has no parameter "sise": it takes size, layers, fast, seed.');
    assert.equal(refusal({}), 'model needs its parameter "layers" (an int).');
    assert.equal(refusal({ layers: '3' }), `model's parameter "layers" must be an integer (within ±2^53), got string.`);
    assert.equal(refusal({ layers: 3, fast: 1 }), `model's parameter "fast" must be true or false, got number.`);
    assert.equal(refusal({ layers: 3, seed: 'AA==' }), `model's parameter "seed" must be {"base64": "<the bytes, base64>"}, got string.`);
    assert.equal(refusal({ layers: 3, size: 'x'.repeat(4097) }), `model's parameter "size" must be at most 4096 characters.`);
    assert.equal(refusal([1]), 'the field "parameters" must be an object, got array.');
  });

  it('gives a class without parameters none, and refuses any for it', () => {
    const plain = { name: 'plain', class: { ...model.class, parameters: [] } };
    assert.deepEqual(bindClassParameters(plain, undefined), {});
    assert.equal(refusal({ size: 'x' }, plain), 'plain has no parameter "size": it takes no parameters.');
  });
});
