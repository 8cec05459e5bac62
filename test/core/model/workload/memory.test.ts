import assert from 'node:assert/strict';
import { formatMemoryMiB, parseMemoryMiB } from '../../../../core/model/workload/memory.js';

describe('parseMemoryMiB()', () => {
  it('reads Mi as MiB and Gi as 1024 MiB', () => {
    assert.equal(parseMemoryMiB('512Mi'), 512);
    assert.equal(parseMemoryMiB('2Gi'), 2048);
    assert.equal(parseMemoryMiB('256Gi'), 262_144);
    assert.equal(parseMemoryMiB('64Mi'), 64);
  });

  it('returns null for anything else', () => {
    for (const text of ['1.5Gi', '512', '512MB', '512mi', ' 512Mi', '-1Gi', '1Ti', '', '0512Mi', '0Gi', '99999999999999999999Mi']) {
      assert.equal(parseMemoryMiB(text), null, text);
    }
  });
});

describe('formatMemoryMiB()', () => {
  it('writes whole GiB as Gi', () => {
    assert.equal(formatMemoryMiB(2048), '2Gi');
    assert.equal(formatMemoryMiB(1536), '1536Mi');
  });
});
