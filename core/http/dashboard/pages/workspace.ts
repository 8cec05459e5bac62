/**
 * Workspace: its name and plan, its members with their roles and the open
 * invitations; for owners, inviting a person (the one-time invitation link is
 * shown once) and removing one (confirmed first). Also the viewer's other
 * workspaces, to switch to, and a form to create a new one.
 */
import { SvcError } from '../../../model/errors.js';
import type { Member } from '../../../services/members/members.js';
import { roleIn } from '../../../services/accounts/types.js';
import { domainsCard } from '../domains-card.js';
import { html, type Html } from '../html.js';
import { csrfField, notice, onceField, page } from '../layout.js';
import { readForm, redirect, renderErrors, sendPage } from '../respond.js';
import { checkCsrf, type Context } from '../session-cookie.js';
import type { DashboardServices, Viewer } from '../types.js';
import { claimOnce, signedIn } from '../viewer.js';

const WORKSPACE = '/dashboard/workspace';
type Params = Context & { params: Record<string, string> };

export function workspacePages(services: DashboardServices) {
  const { members, sessions } = services.controlPlane;

  return {
    async show(ctx: Context): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer !== null) await renderErrors(ctx, viewer, () => show(services, ctx, viewer));
    },

    invite: (ctx: Context) => inviteMember(services, ctx),

    confirmRemove: (ctx: Params) => confirmRemoveMember(services, ctx),

    async remove(ctx: Params): Promise<void> {
      const body = await readForm(ctx);
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, () =>
        form(services, ctx, viewer, body, async () => {
          const removed = await members.remove(ctx.params.id, viewer.principal);
          redirect(ctx, `${WORKSPACE}?done=${encodeURIComponent(`${removed.name} was removed from ${viewer.session.workspace}.`)}`);
        }),
      );
    },

    async switchTo(ctx: Context): Promise<void> {
      const body = await readForm(ctx);
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, () =>
        form(services, ctx, viewer, body, async () => {
          const name = body.workspace;
          if (typeof name !== 'string' || !viewer.account.workspaces.includes(name)) {
            throw new SvcError('not_found', `you have no workspace ${JSON.stringify(name)}.`);
          }
          await sessions.switchWorkspace(viewer.secret, name);
          redirect(ctx, `${WORKSPACE}?done=${encodeURIComponent(`You are in workspace ${name} now.`)}`);
        }),
      );
    },

    async create(ctx: Context): Promise<void> {
      const body = await readForm(ctx);
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, () =>
        form(services, ctx, viewer, body, async () => {
          await claimOnce(services, viewer, body);
          const created = await members.createWorkspace(body.name, viewer.principal);
          await sessions.switchWorkspace(viewer.secret, created.name);
          redirect(ctx, `${WORKSPACE}?done=${encodeURIComponent(`Workspace ${created.name} is created; you own it and are in it now.`)}`);
        }),
      );
    },
  };
}

/** Invites a member from the form and shows their sign-in link, once. */
async function inviteMember(services: DashboardServices, ctx: Context): Promise<void> {
  const { members } = services.controlPlane;
  const body = await readForm(ctx);
  const viewer = await signedIn(ctx, services);
  if (viewer === null) return;
  await renderErrors(ctx, viewer, () =>
    form(services, ctx, viewer, body, async () => {
      await claimOnce(services, viewer, body);
      const { member, signIn } = await members.invite({ name: body.name, role: body.role }, viewer.principal);
      const link = `${services.publicUrl ?? ctx.origin}/login#${signIn.secret}`;
      await show(
        services,
        ctx,
        viewer,
        html`<section class="card created" aria-labelledby="invited">
  <h2 id="invited">${member.name} is invited as ${member.role}</h2>
  <p role="status">Send them this link: it signs them in once, until ${signIn.expiresAt.slice(0, 16).replace('T', ' ')} UTC. It is shown this once.</p>
  <label for="invitation">Invitation link</label>
  <div class="copy-row"><input id="invitation" type="text" readonly value="${link}" spellcheck="false"><button type="button" data-copy="invitation" hidden>Copy</button></div>
</section>`,
      );
    }),
  );
}

/** Asks before a member is removed from the workspace. */
async function confirmRemoveMember(services: DashboardServices, ctx: Params): Promise<void> {
  const { members } = services.controlPlane;
  const viewer = await signedIn(ctx, services);
  if (viewer === null) return;
  await renderErrors(ctx, viewer, async () => {
    const member = (await members.list(viewer.principal)).find((m) => m.id === ctx.params.id);
    if (member === undefined) throw new SvcError('not_found', `workspace ${viewer.session.workspace} has no member ${ctx.params.id}.`);
    sendPage(
      ctx,
      page({
        title: `Remove ${member.name}?`,
        section: 'workspace',
        viewer,
        body: html`<div class="card"><p>${member.name} loses workspace ${viewer.session.workspace}: signed out of it at once, and every token they made there is revoked.</p>
  <form method="post" action="${ctx.path}" class="actions">${csrfField(viewer)}<button type="submit" class="danger">Remove ${member.name}</button><a href="${WORKSPACE}">Cancel</a></form></div>`,
      }),
    );
  });
}

/** The workspace page: about, members (and inviting for owners), domains, your other workspaces; `top` above them. */
async function show(services: DashboardServices, ctx: Context, viewer: Viewer, top: Html | null = null, status = 200): Promise<void> {
  const { workspaces, members } = services.controlPlane;
  const workspace = await workspaces.require(viewer.session.workspace);
  const people = await members.list(viewer.principal);
  const owner = roleIn(viewer.account, workspace.name) === 'owner';
  const mine = await members.workspacesOf(viewer.principal);
  const joined = people.filter((m) => m.joined);
  const invited = people.filter((m) => !m.joined);
  const domains = services.domains ? await services.domains.list(workspace.name) : null;
  const row = (member: Member) =>
    html`<tr><td>${member.name}${member.id === viewer.account.id ? ' (you)' : ''}</td><td><code>${member.id}</code></td><td>${member.role}</td>${owner ? html`<td>${member.id === viewer.account.id ? '' : html`<a href="${WORKSPACE}/members/${member.id}/remove">Remove<span class="visually-hidden"> ${member.name}</span></a>`}</td>` : ''}</tr>`;
  const table = (list: readonly Member[], caption: string) => html`<div class="scroll"><table>
  <caption class="visually-hidden">${caption}</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Account</th><th scope="col">Role</th>${owner ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}</tr></thead>
  <tbody>${list.map(row)}</tbody>
</table></div>`;
  sendPage(
    ctx,
    page({
      title: `Workspace ${workspace.name}`,
      section: 'workspace',
      viewer,
      body: html`${top ?? ''}${typeof ctx.query.done === 'string' ? notice('ok', ctx.query.done) : ''}
<section class="card" aria-labelledby="about">
  <h2 id="about">About</h2>
  <dl class="facts"><dt>Name</dt><dd>${workspace.name}</dd><dt>Plan</dt><dd>${workspace.plan}</dd><dt>Your role</dt><dd>${roleIn(viewer.account, workspace.name)}</dd><dt>Created</dt><dd><time datetime="${workspace.createdAt}">${workspace.createdAt.slice(0, 10)}</time></dd></dl>
</section>
<section class="card" aria-labelledby="members">
  <h2 id="members">Members</h2>
  ${table(joined, 'Members')}
  ${invited.length === 0 ? '' : html`<h3>Invited, not signed in yet</h3>${table(invited, 'Open invitations')}`}
  ${
    owner
      ? html`<form method="post" action="${WORKSPACE}/invitations" class="invite">
    ${csrfField(viewer)}${onceField()}
    <h3>Invite someone</h3>
    <label for="invite-name">Their name</label>
    <input id="invite-name" name="name" type="text" required maxlength="100" autocomplete="off">
    <label for="invite-role">Role</label>
    <select id="invite-role" name="role"><option value="member">member: uses the workspace</option><option value="owner">owner: also invites and removes people</option></select>
    <p class="help">You get a one-time sign-in link for them, valid for 7 days. Send it to them yourself.</p>
    <button type="submit">Invite</button>
  </form>`
      : html`<p class="help">Only an owner invites and removes people.</p>`
  }
</section>
${domainsCard(domains, workspace.plan)}
<section class="card" aria-labelledby="yours">
  <h2 id="yours">Your workspaces</h2>
  <ul class="plain">${mine.map(
    ({ workspace: w, role }) =>
      html`<li>${
        w.name === workspace.name
          ? html`<strong>${w.name}</strong> (${role}, current)`
          : html`<form method="post" action="${WORKSPACE}/switch" class="inline">${csrfField(viewer)}<input type="hidden" name="workspace" value="${w.name}"><button type="submit" class="link">Switch to ${w.name}</button> (${role})</form>`
      }</li>`,
  )}</ul>
  <form method="post" action="${WORKSPACE}s" class="create">
    ${csrfField(viewer)}${onceField()}
    <label for="new-workspace">New workspace</label>
    <input id="new-workspace" name="name" type="text" required maxlength="63" placeholder="acme-prod" autocomplete="off" spellcheck="false">
    <p class="help">A lowercase name: letters, digits and "-". You will own it.</p>
    <button type="submit">Create workspace</button>
  </form>
</section>`,
    }),
    status,
  );
}

/** Runs a form's change, or shows the page again with what was wrong (a 4xx the person can fix). */
async function form(
  services: DashboardServices,
  ctx: Context,
  viewer: Viewer,
  body: Record<string, unknown>,
  change: () => Promise<void>,
): Promise<void> {
  checkCsrf(ctx, body, viewer.session.csrf);
  try {
    await change();
  } catch (error) {
    if (!(error instanceof SvcError) || error.status >= 500 || error.status === 401) throw error;
    await show(services, ctx, viewer, notice('error', `${error.message}${error.hint ? ` ${error.hint}` : ''}`), error.status);
  }
}
