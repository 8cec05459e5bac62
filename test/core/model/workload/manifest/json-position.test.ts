import assert from 'node:assert/strict';
import { jsonErrorOffset, positionAt } from '../../../../../core/model/workload/manifest/parse.js';

describe('jsonErrorOffset()', () => {
  it('returns null for valid JSON', () => {
    for (const text of ['{}', ' [1, -2.5e3, "a\\u00e9\\n", true, false, null, {"k": {}}] ', '"x"', '0']) {
      assert.equal(jsonErrorOffset(text), null, text);
    }
  });

  it('finds the first bad character', () => {
    const cases: [string, number][] = [
      ['{"a":}', 5],
      ['[1,2,,]', 5],
      ['[1,2,]', 5],
      ['{"a":1,}', 7],
      ['{"a" 1}', 5],
      ["{'a':1}", 1],
      // jsonc-parser points at the start of a bad token (a literal, a string), not at the bad character inside it.
      ['[tru]', 1],
      ['[01]', 2],
      ['"a\\x"', 0],
      ['"line\nbreak"', 0],
      ['{"a":1}x', 7],
      ['[1', 2],
    ];
    for (const [text, offset] of cases) assert.equal(jsonErrorOffset(text), offset, JSON.stringify(text));
  });
});

describe('positionAt()', () => {
  it('counts lines and columns from 1', () => {
    assert.deepEqual(positionAt('ab\ncd', 4), { offset: 4, line: 2, column: 2 });
    assert.deepEqual(positionAt('ab', 0), { offset: 0, line: 1, column: 1 });
  });
});
