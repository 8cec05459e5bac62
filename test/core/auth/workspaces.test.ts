import assert from 'node:assert/strict';
import type { Actor } from '../../../core/accounts/types.js';
import { checkName, nameProblem, suggestName } from '../../../core/workspaces/names.js';
import { Workspaces } from '../../../core/workspaces/workspaces.js';
import { manualClock, storeKinds } from './fixtures.js';

describe('nameProblem() and checkName()', () => {
  it('accepts lowercase DNS labels of 1 to 63 characters', () => {
    for (const name of ['a', '0', 'default', 'acme-prod', 'a1-b2', 'x'.repeat(63)]) assert.equal(nameProblem(name), null, name);
  });

  it('says precisely what is wrong with other names', () => {
    assert.match(nameProblem('')!, /must not be empty/);
    assert.match(nameProblem('x'.repeat(64))!, /is 64 characters long; at most 63/);
    assert.match(nameProblem('Acme')!, /upper-case letter "A".*try "acme"/);
    assert.match(nameProblem('acme_prod')!, /character "_" at position 5/);
    assert.match(nameProblem('acme.prod')!, /character "\." at position 5/);
    assert.match(nameProblem('-acme')!, /must not start with "-"/);
    assert.match(nameProblem('acme-')!, /must not end with "-"/);
    assert.match(nameProblem('acme--prod')!, /must not contain "--"/);
    assert.match(nameProblem(42)!, /must be a string, not number/);
  });

  it('suggests the name suggestName makes when that one follows the rule', () => {
    assert.equal(nameProblem('Acme_Prod'), 'has the upper-case letter "A"; names are lower case; try "acme-prod"');
    assert.equal(nameProblem('acme_prod'), 'has the character "_" at position 5; only a-z, 0-9 and "-" are allowed; try "acme-prod"');
    assert.match(nameProblem('acme--prod')!, /; try "acme-prod"$/);
    assert.match(nameProblem('-acme-')!, /^must not start with "-"; try "acme"$/);
    assert.equal(nameProblem('acme.prod'), 'has the character "." at position 5; only a-z, 0-9 and "-" are allowed');
    assert.equal(nameProblem('API'), 'has the upper-case letter "A"; names are lower case'); // "api" is reserved
    assert.match(nameProblem('API', 'app')!, /; try "api"$/);
  });

  it('suggestName: lower case, "_" as "-", runs of "-" as one, no "-" at either end', () => {
    const cases: [string, string][] = [
      ['say_hello', 'say-hello'], ['_private_fn', 'private-fn'], ['Greet', 'greet'], ['say__hello', 'say-hello'],
      ['__dunder__', 'dunder'], ['a-_-b', 'a-b'], ['_', ''], ['a.b', 'a.b'],
    ];
    for (const [text, expected] of cases) assert.equal(suggestName(text), expected, text);
  });

  it('throws name_invalid naming the kind and the name', () => {
    assert.equal(checkName('workspace', 'acme'), 'acme');
    assert.throws(() => checkName('workspace', 'Acme'), (error: any) => {
      assert.equal(error.code, 'name_invalid');
      assert.equal(error.status, 422);
      assert.match(error.message, /^the workspace name "Acme" has the upper-case letter/);
      assert.deepEqual(error.details, { kind: 'workspace', name: 'Acme' });
      return true;
    });
  });
});

for (const kind of storeKinds()) {
  describe(`Workspaces (${kind.name})`, () => {
    const owner = (workspace: string): Actor => ({ principal: { workspace, subject: 'acc_owner' }, role: 'owner' });

    it('creates default once: the first start creates it, later starts find it', async () => {
      const store = await kind.open();
      const workspaces = new Workspaces(store, manualClock().now);
      const first = await workspaces.ensureDefault();
      assert.equal(first.created, true);
      assert.deepEqual(first.workspace, { name: 'default', plan: 'free', createdAt: '2030-01-01T00:00:00.000Z' });
      const again = await new Workspaces(store).ensureDefault();
      assert.deepEqual(again, { workspace: first.workspace, created: false });
      assert.deepEqual(await store.keys('workspaces/'), ['workspaces/default']);
      await store.close();
    });

    it('creates workspaces with valid names only, once', async () => {
      const store = await kind.open();
      const workspaces = new Workspaces(store);
      assert.equal((await workspaces.create('acme')).plan, 'free');
      assert.equal((await workspaces.create('big', 'business')).plan, 'business');
      await assert.rejects(workspaces.create('acme'), { code: 'conflict', message: 'the workspace "acme" already exists' });
      await assert.rejects(workspaces.create('Acme'), { code: 'name_invalid' });
      await assert.rejects(workspaces.create('x', 'gold'), { code: 'bad_request', message: 'the plan "gold" is not one of free, team, business' });
      assert.deepEqual((await workspaces.list()).map((w) => w.name), ['acme', 'big']);
      await store.close();
    });

    it('lets an owner of the workspace set its plan, and keeps it', async () => {
      const store = await kind.open();
      const workspaces = new Workspaces(store);
      await workspaces.create('acme');
      assert.equal((await workspaces.setPlan('acme', 'team', owner('acme'))).plan, 'team');
      assert.equal((await workspaces.get('acme'))?.plan, 'team');
      await store.close();
    });

    it('refuses the plan change to members and to owners of other workspaces, with forbidden', async () => {
      const store = await kind.open();
      const workspaces = new Workspaces(store);
      await workspaces.create('acme');
      await workspaces.create('other');
      await assert.rejects(workspaces.setPlan('acme', 'team', { principal: { workspace: 'acme', subject: 'acc_bob' }, role: 'member' }), {
        code: 'forbidden',
        message: 'only an owner may change the plan of workspace "acme"; acc_bob is a member',
      });
      await assert.rejects(workspaces.setPlan('acme', 'team', owner('other')), { code: 'forbidden' });
      assert.equal((await workspaces.get('acme'))?.plan, 'free');
      await store.close();
    });

    it('validates the plan and the workspace', async () => {
      const store = await kind.open();
      const workspaces = new Workspaces(store);
      await workspaces.create('acme');
      await assert.rejects(workspaces.setPlan('acme', 'enterprise', owner('acme')), { code: 'bad_request', message: /"enterprise" is not one of free, team, business/ });
      await assert.rejects(workspaces.setPlan('acme', 7, owner('acme')), { code: 'bad_request', message: /7 is not one of/ });
      await assert.rejects(workspaces.setPlan('ghost', 'team', owner('ghost')), { code: 'not_found' });
      await assert.rejects(workspaces.get('Bad Name'), { code: 'name_invalid' });
      await store.close();
    });
  });
}
