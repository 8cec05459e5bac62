/** retryUnsent: a call that never reached its container goes again; one that may have is never sent twice. */
import assert from 'node:assert/strict';
import { upstreamError } from '../../../../core/model/upstream-error.js';
import { retryUnsent } from '../../../../core/services/runs/unsent-retry.js';

const unreachable = (code: string) => upstreamError(Object.assign(new Error(code), { code }), false);

describe('retryUnsent()', () => {
  it('sends again a call whose container could not be reached (ENOENT, ECONNREFUSED), then answers', async () => {
    const failures = [unreachable('ENOENT'), unreachable('ECONNREFUSED')];
    let sent = 0;
    const answer = await retryUnsent(
      async () => {
        sent++;
        const failure = failures.shift();
        if (failure) throw failure;
        return 'answered';
      },
      true,
      new AbortController().signal,
    );
    assert.deepEqual([answer, sent], ['answered', 3]);
  });

  it('never sends twice a call that may have reached its container, nor a streamed body, and gives up after four tries', async () => {
    for (const [error, resendable] of [
      [upstreamError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), false), true],
      [unreachable('UND_ERR_CONNECT_TIMEOUT'), true],
      [unreachable('ENOENT'), false],
    ] as const) {
      let sent = 0;
      await assert.rejects(
        retryUnsent(
          async () => {
            sent++;
            throw error;
          },
          resendable,
          new AbortController().signal,
        ),
        (thrown) => thrown === error,
      );
      assert.equal(sent, 1, `${error.code} (${String((error.cause as { code?: string }).code)}), resendable ${resendable}`);
    }
    let sent = 0;
    await assert.rejects(
      retryUnsent(
        async () => {
          sent++;
          throw unreachable('ENOENT');
        },
        true,
        new AbortController().signal,
      ),
      /could not be reached \(ENOENT\)/,
    );
    assert.equal(sent, 4);
  });
});
