import assert from 'node:assert/strict';
import { CallDeadline, type CallLimit } from '../../../core/model/call-timeout.js';
import type { SvcError } from '../../../core/model/errors.js';
import { until } from '../../helpers/until.js';

const quick: CallLimit = { workload: 'greet', seconds: 0.05 };

describe('CallDeadline', () => {
  it('runs the backstop once, with the timeout error, for a call still in flight past its time-out and grace', async () => {
    const fired: SvcError[] = [];
    const deadline = new CallDeadline(quick, (error) => fired.push(error), 0);
    assert.equal(deadline.expired(), undefined, 'not yet');
    await until('the backstop ran', () => fired.length === 1);
    assert.equal(fired[0]!.code, 'timeout');
    assert.match(fired[0]!.message, /greet did not finish within its timeout of 0.05 s/);
    assert.equal(deadline.expired()?.code, 'timeout');
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(fired.length, 1, 'once');
  });

  it('never runs the backstop of a call cleared in time, while others in flight still get theirs', async () => {
    const fired: string[] = [];
    const done = new CallDeadline(quick, () => fired.push('done'), 0);
    done.clear();
    new CallDeadline({ workload: 'slow', seconds: 0.05 }, () => fired.push('slow'), 0);
    await until('the other backstop ran', () => fired.includes('slow'));
    assert.deepEqual(fired, ['slow']);
  });
});
