import assert from 'node:assert/strict';
import { checkName, nameProblem, suggestName } from '../../../../core/model/names.js';
import { Workspaces } from '../../../../core/services/workspaces/workspaces.js';
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
      ['say_hello', 'say-hello'],
      ['_private_fn', 'private-fn'],
      ['Greet', 'greet'],
      ['say__hello', 'say-hello'],
      ['__dunder__', 'dunder'],
      ['a-_-b', 'a-b'],
      ['_', ''],
      ['a.b', 'a.b'],
    ];
    for (const [text, expected] of cases) assert.equal(suggestName(text), expected, text);
  });

  it('throws name_invalid naming the kind and the name', () => {
    assert.equal(checkName('workspace', 'acme'), 'acme');
    assert.throws(
      () => checkName('workspace', 'Acme'),
      (error: any) => {
        assert.equal(error.code, 'name_invalid');
        assert.equal(error.status, 422);
        assert.match(error.message, /^the workspace name "Acme" has the upper-case letter/);
        assert.deepEqual(error.details, { kind: 'workspace', name: 'Acme' });
        return true;
      },
    );
  });
});

for (const kind of storeKinds()) {
  describe(`Workspaces (${kind.name})`, () => {
    const operator = { subject: 'acc_op', operator: true };

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
      await assert.rejects(workspaces.create('x', 'gold'), {
        code: 'bad_request',
        message: 'the plan "gold" is not one of free, team, business',
      });
      assert.deepEqual(
        (await workspaces.list()).map((w) => w.name),
        ['acme', 'big'],
      );
      await store.close();
    });

    it('lets the operator set a plan, keeps it, and records who and when; an unchanged plan records nothing', async () => {
      const store = await kind.open();
      const workspaces = new Workspaces(store, () => Date.parse('2026-01-02T03:04:05Z'));
      await workspaces.create('acme');
      const { workspace, change } = await workspaces.setPlan('acme', 'team', operator);
      assert.equal(workspace.plan, 'team');
      assert.deepEqual(change, { workspace: 'acme', from: 'free', to: 'team', by: 'acc_op', at: '2026-01-02T03:04:05.000Z' });
      assert.equal((await workspaces.get('acme'))?.plan, 'team');
      assert.equal((await workspaces.setPlan('acme', 'team', operator)).change, null);
      await workspaces.setPlan('acme', 'free', operator);
      assert.deepEqual(
        (await workspaces.planChanges('acme')).map((c) => `${c.from}->${c.to} by ${c.by}`),
        ['free->team by acc_op', 'team->free by acc_op'],
      );
      await store.close();
    });

    it('refuses the plan change to anyone but the operator, owners of the workspace included, with not_operator, and records nothing', async () => {
      const store = await kind.open();
      const workspaces = new Workspaces(store);
      await workspaces.create('acme');
      await assert.rejects(workspaces.setPlan('acme', 'team', { subject: 'acc_bob', operator: false }), {
        code: 'not_operator',
        message: 'only the server\'s operator may change the plan of workspace "acme"; acc_bob is not the operator',
      });
      assert.equal((await workspaces.get('acme'))?.plan, 'free');
      assert.deepEqual(await workspaces.planChanges('acme'), []);
      await store.close();
    });

    it('keeps every one of concurrent plan changes recorded once, and the last applied wins', async () => {
      const store = await kind.open();
      const workspaces = new Workspaces(store);
      await workspaces.create('acme');
      const plans = ['team', 'business', 'team', 'business', 'free'] as const;
      const results = await Promise.all(plans.map((plan) => workspaces.setPlan('acme', plan, operator)));
      const applied = results.flatMap((r) => (r.change === null ? [] : [`${r.change.from}->${r.change.to}`])).sort();
      // Exactly the changes that happened are recorded: a write that lost its race left no record behind.
      assert.deepEqual((await workspaces.planChanges('acme')).map((c) => `${c.from}->${c.to}`).sort(), applied);
      await store.close();
    });

    it('validates the plan and the workspace', async () => {
      const store = await kind.open();
      const workspaces = new Workspaces(store);
      await workspaces.create('acme');
      await assert.rejects(workspaces.setPlan('acme', 'enterprise', operator), {
        code: 'bad_request',
        message: /"enterprise" is not one of free, team, business/,
      });
      await assert.rejects(workspaces.setPlan('acme', 7, operator), { code: 'bad_request', message: /7 is not one of/ });
      await assert.rejects(workspaces.setPlan('ghost', 'team', operator), { code: 'not_found' });
      await assert.rejects(workspaces.get('Bad Name'), { code: 'name_invalid' });
      await store.close();
    });
  });
}
