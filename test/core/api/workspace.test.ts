import assert from 'node:assert/strict';
import { startApiPlatform, tokenFor, type ApiFixture } from './platform.js';

describe('API /api/v1/workspace', function () {
  let f: ApiFixture;
  before(async () => (f = await startApiPlatform()));
  after(async () => f?.platform.close());
  afterEach(() => assert.deepEqual(f.reports, [], 'no unexpected errors'));

  it("GET answers the caller's workspace", async () => {
    const answer = await f.call('GET', '/api/v1/workspace', { token: f.owner });
    assert.equal(answer.status, 200);
    assert.deepEqual(Object.keys(answer.json).sort(), ['createdAt', 'name', 'plan']);
    assert.deepEqual([answer.json.name, answer.json.plan], ['default', 'free']);
    const acme = await tokenFor(f.platform, 'acme');
    assert.equal((await f.call('GET', '/api/v1/workspace', { token: acme.secret })).json.name, 'acme');
  });

  it('PATCH sets the plan for an owner, and the change is read back', async () => {
    const answer = await f.call('PATCH', '/api/v1/workspace', { token: f.owner, json: { plan: 'team' } });
    assert.equal(answer.status, 200);
    assert.equal(answer.json.plan, 'team');
    assert.equal((await f.call('GET', '/api/v1/workspace', { token: f.owner })).json.plan, 'team');
  });

  it('PATCH answers 403 forbidden for a member, and changes nothing', async () => {
    const member = await tokenFor(f.platform, 'default', 'acc_00000000000000bb');
    const answer = await f.call('PATCH', '/api/v1/workspace', { token: member.secret, json: { plan: 'business' } });
    assert.equal(answer.status, 403);
    assert.equal(answer.json.error.code, 'forbidden');
    assert.match(answer.json.error.message, /only an owner may change the plan/);
    assert.equal((await f.call('GET', '/api/v1/workspace', { token: f.owner })).json.plan, 'team');
  });

  for (const [what, json, message] of [
    ['an unknown plan', { plan: 'enterprise' }, /the plan "enterprise" is not one of free, team, business/],
    ['a plan of the wrong type', { plan: 3 }, /the plan 3 is not one of/],
    ['no plan', {}, /the field "plan" is required/],
    ['an unknown field', { plan: 'team', name: 'renamed' }, /unknown field "name"; this route takes "plan"/],
  ] as const) {
    it(`PATCH refuses ${what} with 400`, async () => {
      const answer = await f.call('PATCH', '/api/v1/workspace', { token: f.owner, json });
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.json.error.message, message);
    });
  }
});
