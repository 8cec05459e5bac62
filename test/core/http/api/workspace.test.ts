import assert from 'node:assert/strict';
import { startApiPlatform, tokenFor, type ApiFixture } from './platform.js';

describe('API /api/v1/workspace', () => {
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

  it('PATCH sets the plan for the operator (the first owner account), and the change is read back', async () => {
    const answer = await f.call('PATCH', '/api/v1/workspace', { token: f.owner, json: { plan: 'team' } });
    assert.equal(answer.status, 200);
    assert.equal(answer.json.plan, 'team');
    assert.equal((await f.call('GET', '/api/v1/workspace', { token: f.owner })).json.plan, 'team');
  });

  it('PATCH answers 403 not_operator for a member, and changes nothing', async () => {
    const member = await tokenFor(f.platform, 'default', 'acc_00000000000000bb');
    const answer = await f.call('PATCH', '/api/v1/workspace', { token: member.secret, json: { plan: 'business' } });
    assert.equal(answer.status, 403);
    assert.equal(answer.json.error.code, 'not_operator');
    assert.match(answer.json.error.message, /only the server's operator may change the plan of workspace "default"/);
    assert.equal((await f.call('GET', '/api/v1/workspace', { token: f.owner })).json.plan, 'team');
  });

  it('refuses an owner of a workspace who is not the operator: it reads its plan and its record, and cannot raise it', async () => {
    // An account that created "acme" owns it: roles there say owner.
    const acme = await tokenFor(f.platform, 'acme', 'acc_00000000000000cc');
    await f.platform.controlPlane.accounts.update('acc_00000000000000cc', (account) => ({ ...account, roles: { acme: 'owner' } }));
    for (const [method, path] of [
      ['PATCH', '/api/v1/workspace'],
      ['PUT', '/api/v1/workspaces/acme/plan'],
    ] as const) {
      const answer = await f.call(method, path, { token: acme.secret, json: { plan: 'business' } });
      assert.equal(answer.status, 403, answer.text);
      assert.equal(answer.json.error.code, 'not_operator');
    }
    const read = await f.call('GET', '/api/v1/workspace/plan', { token: acme.secret });
    assert.equal(read.status, 200);
    assert.deepEqual(read.json, { workspace: 'acme', plan: 'free', changes: [], operator: false });
  });

  it("PUT lets the operator set any workspace's plan; the workspace reads who changed it and when", async () => {
    await tokenFor(f.platform, 'beta');
    const before = Date.now();
    const answer = await f.call('PUT', '/api/v1/workspaces/beta/plan', { token: f.owner, json: { plan: 'business' } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.plan, 'business');
    const member = await tokenFor(f.platform, 'beta', 'acc_00000000000000dd');
    const read = (await f.call('GET', '/api/v1/workspace/plan', { token: member.secret })).json;
    assert.equal(read.plan, 'business');
    assert.equal(read.changes.length, 1);
    const [change] = read.changes;
    assert.deepEqual(
      [change.workspace, change.from, change.to, change.by],
      ['beta', 'free', 'business', f.platform.controlPlane.owner.account.id],
    );
    assert.ok(Date.parse(change.at) >= before - 1000 && Date.parse(change.at) <= Date.now());
    assert.equal((await f.call('PUT', '/api/v1/workspaces/ghost/plan', { token: f.owner, json: { plan: 'team' } })).status, 404);
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
