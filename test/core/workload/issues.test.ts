import assert from 'node:assert/strict';
import { IssueCollector, joinPath } from '../../../core/workload/issues.js';

describe('joinPath()', () => {
  it('writes indexes in brackets, identifiers after a dot and other keys quoted', () => {
    assert.equal(joinPath('', 'workloads'), 'workloads');
    assert.equal(joinPath('workloads', 1), 'workloads[1]');
    assert.equal(joinPath('workloads[1]', 'options'), 'workloads[1].options');
    assert.equal(joinPath('options', 'max memory'), 'options["max memory"]');
  });
});

describe('IssueCollector', () => {
  it('collects issues from child collectors into one list, in order', () => {
    const root = IssueCollector.root();
    const workload = root.at('workloads').at(1);
    workload.at('options').add('bad memory', 'memory');
    root.add('not an object');
    workload.add('bad name', 'name');
    assert.deepEqual(root.issues, [
      { path: 'workloads[1].options.memory', message: 'bad memory' },
      { path: '(root)', message: 'not an object' },
      { path: 'workloads[1].name', message: 'bad name' },
    ]);
    assert.equal(workload.count, 3);
  });
});
