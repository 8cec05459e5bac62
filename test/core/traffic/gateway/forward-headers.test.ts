import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import { endToEndHeaders, requestHead, responseHead, withoutAuthorization } from '../../../../core/traffic/gateway/forward-headers.js';
import { checkHost } from '../../../../core/traffic/gateway/host-check.js';

const buffers = (list: string[]) => list.map((text) => Buffer.from(text, 'latin1'));

describe('requestHead()', () => {
  it('copies end-to-end headers as the client spelled them and picks out Host, Content-Length and X-Request-Id', () => {
    const head = requestHead(
      ['Host', 'a:1', 'Accept', '*/*', 'Content-Length', '4', 'X-Request-Id', 'r-1', 'Cookie', 'a=1', 'Cookie', 'b=2'],
      true,
    );
    assert.deepEqual(head.forward, ['Host', 'a:1', 'Accept', '*/*', 'Content-Length', '4', 'Cookie', 'a=1', 'Cookie', 'b=2']);
    assert.deepEqual([head.host, head.contentLength, head.requestId, head.authorization], ['a:1', '4', 'r-1', false]);
  });

  it('drops hop-by-hop headers, the ones Connection names, and the ones the gateway sets itself', () => {
    const head = requestHead(
      [
        'Host',
        'a',
        'Connection',
        'keep-alive, X-Hop',
        'X-Hop',
        '1',
        'Keep-Alive',
        'timeout=5',
        'TE',
        'trailers',
        'Transfer-Encoding',
        'chunked',
        'Proxy-Authorization',
        'x',
        'Upgrade',
        'h2c',
        'Expect',
        '100-continue',
        'X-Forwarded-For',
        '6.6.6.6',
        'x-forwarded-host',
        'evil',
        'X-End',
        'kept',
      ],
      true,
    );
    assert.deepEqual(head.forward, ['Host', 'a', 'X-End', 'kept']);
  });

  it('sends a repeated Host or Content-Length once, and no length for a bodyless method', () => {
    assert.deepEqual(requestHead(['Host', 'a', 'Host', 'b', 'Content-Length', '1', 'Content-Length', '1'], true).forward, [
      'Host',
      'a',
      'Content-Length',
      '1',
    ]);
    const bodyless = requestHead(['Host', 'a', 'Content-Length', '1'], false);
    assert.deepEqual([bodyless.forward, bodyless.contentLength], [['Host', 'a'], '1']);
  });

  it('has no request id when the client sent several', () => {
    assert.equal(requestHead(['X-Request-Id', 'a', 'X-Request-Id', 'b'], false).requestId, undefined);
  });

  it('removes Authorization only when asked (a protected workload)', () => {
    const head = requestHead(['Authorization', 'Bearer t', 'Host', 'a', 'authorization', 'Bearer u'], false);
    assert.equal(head.authorization, true);
    assert.deepEqual(head.forward, ['Authorization', 'Bearer t', 'Host', 'a', 'authorization', 'Bearer u']);
    withoutAuthorization(head);
    assert.deepEqual(head.forward, ['Host', 'a']);
  });
});

describe('responseHead()', () => {
  it("keeps Content-Length and the rest, drops hop-by-hop and Connection-named headers, and puts the gateway's request id last", () => {
    const head = responseHead(
      buffers([
        'content-type',
        'application/json',
        'content-length',
        '12',
        'connection',
        'close, x-hop',
        'x-hop',
        '1',
        'transfer-encoding',
        'chunked',
        'x-request-id',
        'theirs',
        'set-cookie',
        'a=1',
      ]),
      'ours',
    );
    assert.deepEqual(head.headers, [
      'content-type',
      'application/json',
      'content-length',
      '12',
      'set-cookie',
      'a=1',
      'X-Request-Id',
      'ours',
    ]);
    assert.equal(head.contentLength, 12);
  });

  it('says -1 when the answer has no declared length', () => {
    assert.equal(responseHead(buffers(['transfer-encoding', 'chunked']), 'id').contentLength, -1);
  });
});

describe('checkHost()', () => {
  it('accepts well-formed hosts and refuses malformed or missing ones with bad_request, every time', () => {
    for (const host of ['127.0.0.1:7420', 'example.com', '[::1]:80']) assert.doesNotThrow(() => checkHost(host));
    for (let round = 0; round < 2; round++) {
      for (const host of ['a b', '[::1', 'a:99999', '']) {
        assert.throws(
          () => checkHost(host),
          (error: unknown) => error instanceof SvcError && error.code === 'bad_request',
          host,
        );
      }
    }
  });
});

describe('endToEndHeaders()', () => {
  it('keeps every end-to-end header (repeated ones too) and drops hop-by-hop ones and those Connection names', () => {
    const kept = endToEndHeaders({
      host: 'svc.example',
      authorization: 'Bearer t',
      'set-cookie': ['a=1', 'b=2'],
      'content-length': '4',
      connection: 'keep-alive, x-hop',
      'x-hop': 'gone',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      upgrade: 'h2c',
      te: 'trailers',
    });
    assert.deepEqual(kept, { host: 'svc.example', authorization: 'Bearer t', 'set-cookie': ['a=1', 'b=2'], 'content-length': '4' });
    assert.deepEqual(endToEndHeaders({ connection: 'close', accept: '*/*' }), { accept: '*/*' });
  });
});
