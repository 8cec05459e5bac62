import assert from 'node:assert/strict';
import { joinPath } from '../../../../core/model/schema/issue-path.js';

describe('joinPath()', () => {
  it('writes indexes in brackets, identifiers after a dot and other keys quoted', () => {
    assert.equal(joinPath('', 'workloads'), 'workloads');
    assert.equal(joinPath('workloads', 1), 'workloads[1]');
    assert.equal(joinPath('workloads[1]', 'options'), 'workloads[1].options');
    assert.equal(joinPath('options', 'max memory'), 'options["max memory"]');
  });
});
