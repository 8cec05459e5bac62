import assert from 'node:assert/strict';
import { reloadTimings, warmReads } from '../../cli/serve/switches.js';
import { envSwitch } from '../../config/env-switch.js';
import { SvcError } from '../../core/model/errors.js';

const SWITCH = { name: 'SVC_EXAMPLE', fallback: false, off: 'do less', on: 'do more' };

describe('environment switches', () => {
  it('read 1 as on, 0 as off, unset or empty as their default', () => {
    assert.deepEqual(
      [envSwitch(SWITCH, '1'), envSwitch(SWITCH, ' 0 '), envSwitch(SWITCH, undefined), envSwitch(SWITCH, '')],
      [true, false, false, false],
    );
    assert.equal(envSwitch({ ...SWITCH, fallback: true }, undefined), true);
  });

  it('refuse anything else as config_invalid, naming the variable, the value and both settings', () => {
    for (const raw of ['true', 'yes', '2', 'off']) {
      assert.throws(
        () => envSwitch(SWITCH, raw),
        (error: unknown) => {
          assert.ok(error instanceof SvcError);
          assert.equal(error.code, 'config_invalid');
          assert.equal(error.message, `SVC_EXAMPLE must be 0 or 1, got ${JSON.stringify(raw)}`);
          assert.equal(error.hint, 'Set SVC_EXAMPLE=0 to do less, or SVC_EXAMPLE=1 to do more (unset: 0).');
          return true;
        },
      );
    }
  });

  it("svc serve's own: SVC_SERVE_WARM on by default, SVC_SERVE_TIMINGS off, both checked", () => {
    assert.deepEqual(
      [warmReads({}), warmReads({ SVC_SERVE_WARM: '0' }), reloadTimings({}), reloadTimings({ SVC_SERVE_TIMINGS: '1' })],
      [true, false, false, true],
    );
    assert.throws(() => warmReads({ SVC_SERVE_WARM: 'no' }), /SVC_SERVE_WARM must be 0 or 1, got "no"/);
    assert.throws(() => reloadTimings({ SVC_SERVE_TIMINGS: 'on' }), /SVC_SERVE_TIMINGS must be 0 or 1, got "on"/);
  });
});
