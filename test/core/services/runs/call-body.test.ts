import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { isSvcError } from '../../../../core/model/errors.js';
import { WHOLE_BODY_BYTES, receivedBody } from '../../../../core/services/runs/call-body.js';

const live = () => new AbortController().signal;

describe('receivedBody()', () => {
  it('reads a body of small declared length whole, as one buffer', async () => {
    const body = Readable.from([Buffer.from('pick'), Buffer.from('led')]);
    const received = await receivedBody(body, '7', live());
    assert.ok(Buffer.isBuffer(received));
    assert.equal(received.toString(), 'pickled');
  });

  it('leaves a larger body, or one of unknown length, to stream', async () => {
    const large = Readable.from([Buffer.alloc(WHOLE_BODY_BYTES + 1)]);
    assert.equal(await receivedBody(large, String(WHOLE_BODY_BYTES + 1), live()), large);
    const chunked = Readable.from([Buffer.from('x')]);
    assert.equal(await receivedBody(chunked, undefined, live()), chunked);
  });

  it('says client_closed when the client went away while sending', async () => {
    const gone = new AbortController();
    const body = new Readable({ read() {} });
    const received = receivedBody(body, '10', gone.signal);
    gone.abort();
    body.destroy(new Error('aborted'));
    await assert.rejects(received, (error) => isSvcError(error) && error.code === 'client_closed');
  });
});
