import assert from 'node:assert/strict';
import { Accounts } from '../../../../core/services/accounts/accounts.js';
import { Sessions } from '../../../../core/services/accounts/sessions.js';
import { SignInLinks } from '../../../../core/services/accounts/sign-in.js';
import { StoreTokenVerifier } from '../../../../core/services/auth/store-verifier.js';
import { TokenIndex } from '../../../../core/services/auth/token-index.js';
import { Tokens } from '../../../../core/services/auth/token-service.js';
import { SvcError } from '../../../../core/model/errors.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { Members } from '../../../../core/services/members/members.js';
import { Workspaces } from '../../../../core/services/workspaces/workspaces.js';

async function setUp() {
  const store = createMemoryStateStore();
  const workspaces = new Workspaces(store);
  await workspaces.ensureDefault();
  const accounts = new Accounts(store);
  const { account: owner } = await accounts.ensureOwner();
  const index = await TokenIndex.open(store, {});
  const tokens = new Tokens(store, index, workspaces);
  const signIn = new SignInLinks(store, accounts);
  const sessions = new Sessions(store);
  const members = new Members({ workspaces, accounts, signIn, sessions, tokens });
  return { store, accounts, tokens, signIn, sessions, members, owner, index, verifier: new StoreTokenVerifier(index) };
}

const fails = (code: string) => (error: unknown) => error instanceof SvcError && error.code === code;

describe('Members (workspaces, invitations, removal)', () => {
  it('creates a workspace owned by its creator, who keeps the others', async () => {
    const t = await setUp();
    const created = await t.members.createWorkspace('team-b', { workspace: 'default', subject: t.owner.id });
    assert.equal(created.name, 'team-b');
    const mine = await t.members.workspacesOf({ workspace: 'default', subject: t.owner.id });
    assert.deepEqual(
      mine.map((w) => [w.workspace.name, w.role]),
      [
        ['default', 'owner'],
        ['team-b', 'owner'],
      ],
    );
    await assert.rejects(t.members.createWorkspace('team-b', { workspace: 'default', subject: t.owner.id }), fails('conflict'));
    await assert.rejects(t.members.createWorkspace('Team B', { workspace: 'default', subject: t.owner.id }), fails('name_invalid'));
    await assert.rejects(t.members.createWorkspace('api', { workspace: 'default', subject: t.owner.id }), fails('name_invalid'));
    await t.index.close();
  });

  it('invites a person with a role and a one-time link of 7 days that signs the new account in once', async () => {
    const t = await setUp();
    const { member, signIn } = await t.members.invite({ name: ' Ada ', role: 'member' }, { workspace: 'default', subject: t.owner.id });
    assert.equal(member.name, 'Ada');
    assert.equal(member.role, 'member');
    assert.equal(member.joined, false);
    assert.equal(member.invitedBy, t.owner.id);
    assert.ok(Date.parse(signIn.expiresAt) - Date.now() > 6.9 * 24 * 3600_000);
    const account = await t.signIn.consume(signIn.secret);
    assert.equal(account.id, member.id);
    assert.deepEqual(account.workspaces, ['default']);
    await t.members.joined(account.id);
    assert.equal((await t.members.list({ workspace: 'default', subject: t.owner.id })).find((m) => m.id === member.id)?.joined, true);
    await assert.rejects(t.signIn.consume(signIn.secret), fails('unauthorized'));
    await t.index.close();
  });

  it("lets only owners invite and remove, refuses bad names and roles, and never shows another workspace's people", async () => {
    const t = await setUp();
    const asOwner = { workspace: 'default', subject: t.owner.id };
    const { member } = await t.members.invite({ name: 'Bob' }, asOwner);
    const asBob = { workspace: 'default', subject: member.id };
    await assert.rejects(t.members.invite({ name: 'Eve' }, asBob), fails('forbidden'));
    await assert.rejects(t.members.remove(t.owner.id, asBob), fails('forbidden'));
    await assert.rejects(t.members.invite({ name: '' }, asOwner), fails('bad_request'));
    await assert.rejects(t.members.invite({ name: 'x'.repeat(101) }, asOwner), fails('bad_request'));
    await assert.rejects(t.members.invite({ name: 'Eve', role: 'admin' }, asOwner), fails('bad_request'));
    await t.members.createWorkspace('team-b', asOwner);
    const { member: carol } = await t.members.invite({ name: 'Carol' }, { workspace: 'team-b', subject: t.owner.id });
    assert.deepEqual((await t.members.list(asBob)).map((m) => m.name).sort(), ['Bob', 'owner']);
    await assert.rejects(t.members.remove(carol.id, asOwner), fails('not_found'), "Carol is team-b's, not default's");
    await assert.rejects(t.members.list({ workspace: 'team-b', subject: member.id }), fails('forbidden'), 'Bob is no member of team-b');
    await t.index.close();
  });

  it('removes a member: the workspace goes from the account, its sessions there end, its tokens there are revoked; never the last owner', async () => {
    const t = await setUp();
    const asOwner = { workspace: 'default', subject: t.owner.id };
    const { member } = await t.members.invite({ name: 'Bob', role: 'owner' }, asOwner);
    const bob = { workspace: 'default', subject: member.id };
    const { secret: token } = await t.tokens.create({ name: 'bob-ci' }, bob);
    const { secret: session } = await t.sessions.create(member.id, 'default');
    assert.notEqual(await t.verifier.verify(token), null);
    await t.members.remove(member.id, asOwner);
    assert.equal(await t.verifier.verify(token), null, 'his token is refused at once');
    assert.equal(await t.sessions.find(session), null, 'his session ended');
    assert.deepEqual((await t.accounts.require(member.id)).workspaces, []);
    await assert.rejects(t.members.remove(t.owner.id, asOwner), fails('conflict'), 'the last owner stays');
    await t.index.close();
  });
});
