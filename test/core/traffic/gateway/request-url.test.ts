import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import { parseRequestUrl } from '../../../../core/traffic/gateway/request-url.js';
import { type Harness, parseAnswer, PREFIX, rawRequest, startHarness } from './harness.js';

const MALFORMED = ['a b', '[::1', 'a:99999', 'a/b', 'user@host', 'a?b', '[zz::1]'];

describe('parseRequestUrl()', () => {
  it('builds the URL from protocol, Host and target', () => {
    assert.equal(parseRequestUrl('http', '127.0.0.1:7420', '/default/app/w?x=1').href, 'http://127.0.0.1:7420/default/app/w?x=1');
    assert.equal(parseRequestUrl('http', '[::1]:80', '/').href, 'http://[::1]/');
    assert.equal(parseRequestUrl('http', 'Example.COM', '/a').host, 'example.com');
  });

  it('takes the authority of an absolute-form target', () => {
    assert.equal(parseRequestUrl('http', 'ignored', 'http://other:8080/p').href, 'http://other:8080/p');
  });

  for (const host of MALFORMED) {
    it(`refuses Host "${host}" with bad_request`, () => {
      assert.throws(
        () => parseRequestUrl('http', host, '/'),
        (error: unknown) => error instanceof SvcError && error.code === 'bad_request' && error.message === 'the Host header is malformed.',
      );
    });
  }

  it('refuses a missing Host with bad_request', () => {
    assert.throws(
      () => parseRequestUrl('http', '', '/'),
      (error: unknown) => error instanceof SvcError && error.code === 'bad_request',
    );
  });
});

describe('gateway: malformed Host header', () => {
  let harness: Harness;
  before(async () => (harness = await startHarness()));
  after(async () => harness.close());

  for (const host of ['a b', '[::1', 'a:99999']) {
    it(`answers 400 bad_request for "Host: ${host}" and reports no bug`, async () => {
      const answer = parseAnswer(await rawRequest(harness.port, `GET ${PREFIX}/ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
      assert.equal(answer.status, 400);
      assert.deepEqual(JSON.parse(answer.body).error.code, 'bad_request');
      assert.match(JSON.parse(answer.body).error.message, /Host header is malformed/);
      assert.equal(harness.seen.length, 0, 'the container never sees the request');
      assert.deepEqual(harness.reports, []);
    });
  }

  it('answers platform and unknown URLs alike', async () => {
    const answer = parseAnswer(await rawRequest(harness.port, 'GET /nowhere HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n'));
    assert.equal(answer.status, 400);
  });

  it('still serves a well-formed Host', async () => {
    const answer = parseAnswer(
      await rawRequest(harness.port, `GET ${PREFIX}/ HTTP/1.1\r\nHost: localhost:${harness.port}\r\nConnection: close\r\n\r\n`),
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.body, '{"ok":true}');
  });
});
