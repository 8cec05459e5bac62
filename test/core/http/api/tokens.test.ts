import assert from 'node:assert/strict';
import { startApiPlatform, tokenFor, type ApiFixture } from './platform.js';

describe('API /api/v1/tokens and /whoami', () => {
  let f: ApiFixture;
  before(async () => (f = await startApiPlatform()));
  after(async () => f?.platform.close());
  afterEach(() => assert.deepEqual(f.reports, [], 'no unexpected errors'));

  it('GET /whoami names the workspace, subject, token and role of the owner token', async () => {
    const answer = await f.call('GET', '/api/v1/whoami', { token: f.owner });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json, {
      workspace: 'default',
      subject: f.platform.controlPlane.owner.account.id,
      tokenId: answer.json.tokenId,
      role: 'owner',
    });
    assert.match(answer.json.tokenId, /^tok_[0-9a-f]{12}$/);
  });

  it('POST /tokens answers 201 with the secret once; GET lists it without; the new token works', async () => {
    const created = await f.call('POST', '/api/v1/tokens', {
      token: f.owner,
      json: { name: 'ci', expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
    });
    assert.equal(created.status, 201);
    assert.match(created.json.secret, /^svc_[0-9A-Za-z]{40}$/);
    assert.equal(created.json.name, 'ci');
    assert.equal(created.json.workspace, 'default');
    assert.equal(created.headers.get('location'), `/api/v1/tokens/${created.json.id}`);
    assert.equal(created.headers.get('cache-control'), 'no-store');

    const listed = await f.call('GET', '/api/v1/tokens', { token: f.owner });
    assert.equal(listed.status, 200);
    const mine = listed.json.tokens.find((t: { id: string }) => t.id === created.json.id);
    assert.ok(mine, 'the new token is listed');
    assert.ok(!('secret' in mine) && !('hash' in mine), 'listing shows neither secret nor hash');
    assert.ok(!listed.text.includes(created.json.secret));

    const whoami = await f.call('GET', '/api/v1/whoami', { token: created.json.secret });
    assert.equal(whoami.json.tokenId, created.json.id);
  });

  it('POST /tokens with no body creates an unnamed token without expiry', async () => {
    const created = await f.call('POST', '/api/v1/tokens', { token: f.owner });
    assert.equal(created.status, 201);
    assert.equal(created.json.name, null);
    assert.equal(created.json.expiresAt, null);
  });

  it('DELETE /tokens/:id answers 204 and the very next request with the token gets 401', async () => {
    const created = await f.call('POST', '/api/v1/tokens', { token: f.owner, json: { name: 'short-lived' } });
    const deleted = await f.call('DELETE', `/api/v1/tokens/${created.json.id}`, { token: f.owner });
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    const after = await f.call('GET', '/api/v1/whoami', { token: created.json.secret });
    assert.equal(after.status, 401);
    assert.equal(after.json.error.code, 'unauthorized');
    assert.equal(after.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
    const again = await f.call('DELETE', `/api/v1/tokens/${created.json.id}`, { token: f.owner });
    assert.equal(again.status, 404, 'a revoked token is gone');
  });

  it('a token may revoke itself', async () => {
    const created = await f.call('POST', '/api/v1/tokens', { token: f.owner, json: {} });
    assert.equal((await f.call('DELETE', `/api/v1/tokens/${created.json.id}`, { token: created.json.secret })).status, 204);
    assert.equal((await f.call('GET', '/api/v1/tokens', { token: created.json.secret })).status, 401);
  });

  it("answers 404 (not 403) for another workspace's token, and lists only the caller's workspace", async () => {
    const acme = await tokenFor(f.platform, 'acme');
    const ours = await f.call('POST', '/api/v1/tokens', { token: f.owner, json: { name: 'ours' } });
    const answer = await f.call('DELETE', `/api/v1/tokens/${ours.json.id}`, { token: acme.secret });
    assert.equal(answer.status, 404);
    assert.equal(answer.json.error.code, 'not_found');
    assert.equal((await f.call('GET', '/api/v1/whoami', { token: ours.json.secret })).status, 200, 'still valid');
    const listed = await f.call('GET', '/api/v1/tokens', { token: acme.secret });
    assert.deepEqual(
      listed.json.tokens.map((t: { workspace: string }) => t.workspace),
      ['acme'],
    );
    const whoami = await f.call('GET', '/api/v1/whoami', { token: acme.secret });
    assert.deepEqual({ workspace: whoami.json.workspace, role: whoami.json.role }, { workspace: 'acme', role: 'member' });
  });

  describe('bad input', () => {
    const badBodies: [string, unknown, RegExp][] = [
      ['an unknown field', { name: 'x', scope: 'all' }, /unknown field "scope"; this route takes "name", "expiresAt"/],
      ['a name of the wrong type', { name: 42 }, /name must be a string, not number/],
      ['an empty name', { name: '  ' }, /must not be empty/],
      ['a name over 100 characters', { name: 'x'.repeat(101) }, /101 characters long; at most 100/],
      ['an expiry without a time zone', { expiresAt: '2031-01-01T00:00:00' }, /not an ISO 8601 date-time with a time zone/],
      ['an expiry in the past', { expiresAt: '2001-01-01T00:00:00Z' }, /is not in the future/],
      ['an expiry over a year away', { expiresAt: new Date(Date.now() + 400 * 86_400_000).toISOString() }, /more than one year away/],
      ['an expiry of the wrong type', { expiresAt: 1_900_000_000 }, /must be an ISO 8601 date-time string, not number/],
      ['a JSON array', [], /must be a JSON object, not an array/],
      ['a JSON string', 'ci', /must be a JSON object, not string/],
    ];
    for (const [what, json, message] of badBodies) {
      it(`POST /tokens refuses ${what} with 400 bad_request`, async () => {
        const answer = await f.call('POST', '/api/v1/tokens', { token: f.owner, json });
        assert.equal(answer.status, 400, answer.text);
        assert.equal(answer.json.error.code, 'bad_request');
        assert.match(answer.json.error.message, message);
      });
    }

    it('answers 400 invalid_json for a malformed body, with where it broke', async () => {
      const answer = await f.call('POST', '/api/v1/tokens', {
        token: f.owner,
        body: '{"name": "ci",',
        headers: { 'Content-Type': 'application/json' },
      });
      assert.equal(answer.status, 400);
      assert.equal(answer.json.error.code, 'invalid_json');
      assert.match(answer.json.error.message, /^the request body is not valid JSON: /);
    });

    it('refuses a form body on a JSON route, saying how to send JSON', async () => {
      const answer = await f.call('POST', '/api/v1/tokens', {
        token: f.owner,
        body: '{"name":"ci"}',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(answer.status, 400);
      assert.match(answer.json.error.message, /Content-Type "application\/x-www-form-urlencoded"; this route takes JSON/);
      assert.match(answer.json.error.hint, /curl -d/);
    });

    it('DELETE /tokens/:id refuses something that is not a token id', async () => {
      const answer = await f.call('DELETE', '/api/v1/tokens/tok_nothex', { token: f.owner });
      assert.equal(answer.status, 400);
      assert.match(answer.json.error.message, /is not a token id/);
      assert.equal((await f.call('DELETE', '/api/v1/tokens/tok_000000000000', { token: f.owner })).status, 404);
      assert.equal((await f.call('DELETE', '/api/v1/tokens/%E0%A4%A', { token: f.owner })).status, 400);
    });
  });
});
