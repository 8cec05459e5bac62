import assert from 'node:assert/strict';
import { SvcError } from '../../../core/model/errors.js';
import { zygotesFromEnvironment } from '../../../core/platform/zygotes-setting.js';

describe('SVC_ZYGOTES', () => {
  it('is on when unset, empty or 1, and off with 0', () => {
    assert.equal(zygotesFromEnvironment(undefined), true);
    assert.equal(zygotesFromEnvironment(''), true);
    assert.equal(zygotesFromEnvironment('1'), true);
    assert.equal(zygotesFromEnvironment(' 0 '), false);
  });

  for (const raw of ['maybe', 'false', 'off', '2']) {
    it(`rejects ${JSON.stringify(raw)} as config_invalid, naming the variable and its values`, () => {
      assert.throws(
        () => zygotesFromEnvironment(raw),
        (error: unknown) => {
          assert.ok(error instanceof SvcError);
          assert.equal(error.code, 'config_invalid');
          assert.match(error.message, /SVC_ZYGOTES must be 0 or 1/);
          assert.match(error.message, new RegExp(JSON.stringify(raw)));
          assert.match(error.hint ?? '', /SVC_ZYGOTES=0/);
          return true;
        },
      );
    });
  }
});
