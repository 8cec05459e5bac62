import assert from 'node:assert/strict';
import { startApiPlatform, type ApiFixture } from './platform.js';

describe('API POST /api/v1/sign-in', () => {
  let f: ApiFixture;
  before(async () => (f = await startApiPlatform()));
  after(async () => f?.platform.close());
  afterEach(() => assert.deepEqual(f.reports, [], 'no unexpected errors'));

  it('the first start has a one-time link at /login#<secret>', () => {
    const link = f.platform.signInLink;
    assert.ok(link, 'a fresh data dir creates the owner and a link');
    assert.match(link.url, new RegExp(`^${f.platform.url}/login#[A-Za-z0-9_-]{43}$`));
  });

  it('trades the secret for a 12-hour session token of the owner, once', async () => {
    const secret = f.platform.signInLink!.url.split('#')[1]!;
    const answer = await f.call('POST', '/api/v1/sign-in', { json: { secret } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    assert.equal(answer.json.workspace, 'default');
    assert.equal(answer.json.name, 'dashboard session');
    assert.deepEqual(answer.json.account, { id: f.platform.controlPlane.owner.account.id, name: 'owner', role: 'owner' });
    const hours = (Date.parse(answer.json.expiresAt) - Date.parse(answer.json.createdAt)) / 3_600_000;
    assert.ok(hours > 11.9 && hours <= 12, `expires after 12 hours, not ${hours}`);
    const whoami = await f.call('GET', '/api/v1/whoami', { token: answer.json.secret });
    assert.equal(whoami.json.role, 'owner');

    const again = await f.call('POST', '/api/v1/sign-in', { json: { secret } });
    assert.equal(again.status, 401);
    assert.match(again.json.error.message, /invalid, expired or already used/);
  });

  it('refuses a missing secret, a secret of the wrong type and unknown fields with 400', async () => {
    for (const [json, message] of [
      [{}, /the field "secret" is required/],
      [{ secret: 42 }, /the field "secret" must be a string, not number/],
      [{ secret: 'x', remember: true }, /unknown field "remember"; this route takes "secret"/],
    ] as const) {
      const answer = await f.call('POST', '/api/v1/sign-in', { json });
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.json.error.message, message);
    }
    assert.equal((await f.call('POST', '/api/v1/sign-in', { json: { secret: 'nonsense' } })).status, 401);
  });
});
