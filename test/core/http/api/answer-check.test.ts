import assert from 'node:assert/strict';
import { checkAnswer } from './answer-check.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const whoami = { workspace: 'default', subject: 'acc_0000000000000001', tokenId: 'tok_000000000000', role: 'owner' };

describe('the answer check of the API tests', () => {
  it("passes an answer as its route declares it, and an error in svc's shape", () => {
    checkAnswer('GET', '/api/v1/whoami', 200, JSON_TYPE, JSON.stringify(whoami));
    checkAnswer('GET', '/api/v1/whoami', 401, JSON_TYPE, JSON.stringify({ error: { code: 'unauthorized', message: 'no token.' } }));
    checkAnswer('GET', '/api/v1/nothing', 404, JSON_TYPE, JSON.stringify({ error: { code: 'not_found', message: 'no route.' } }));
    checkAnswer('GET', '/dashboard', 200, 'text/html', '<html></html>');
  });

  it('fails on drift: a field renamed, one added, a wrong type, an error in another shape', () => {
    const { role, ...rest } = whoami;
    for (const drifted of [
      { ...rest, roles: role },
      { ...whoami, extra: 1 },
      { ...whoami, tokenId: 7 },
    ]) {
      assert.throws(
        () => checkAnswer('GET', '/api/v1/whoami', 200, JSON_TYPE, JSON.stringify(drifted)),
        /GET \/api\/v1\/whoami answered 200 with a body its declaration refuses/,
      );
    }
    assert.throws(() => checkAnswer('GET', '/api/v1/whoami', 500, JSON_TYPE, JSON.stringify({ message: 'boom' })), /refuses/);
  });

  it('fails on a status or a JSON body the route does not declare', () => {
    assert.throws(
      () => checkAnswer('GET', '/api/v1/whoami', 201, JSON_TYPE, JSON.stringify(whoami)),
      /a status its route does not declare/,
    );
    assert.throws(
      () => checkAnswer('DELETE', '/api/v1/tokens/tok_000000000000', 204, JSON_TYPE, '{}'),
      /with JSON, which its route does not declare/,
    );
  });

  it("checks each line of a call's NDJSON answer", () => {
    const ndjson = 'application/x-ndjson';
    checkAnswer(
      'POST',
      '/api/v1/runs/run-0123456789abcdef/calls',
      200,
      ndjson,
      '{"type":"log","stream":"stdout","line":"hi"}\n{"type":"result","pickle":"gAU="}\n',
    );
    assert.throws(
      () => checkAnswer('POST', '/api/v1/runs/run-0123456789abcdef/calls', 200, ndjson, '{"type":"result","value":1}\n'),
      /refuses/,
    );
  });
});
