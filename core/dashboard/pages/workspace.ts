/**
 * Workspace: its name, plan and members with their roles. (Invitations and
 * custom domains come with the member and domain features.)
 */
import { html } from '../html.js';
import { page } from '../layout.js';
import { redirect, renderErrors, sendPage } from '../respond.js';
import { readViewer, type Context } from '../session-cookie.js';
import type { DashboardServices } from '../types.js';

export function workspacePages(services: DashboardServices) {
  const { workspaces, accounts } = services.controlPlane;
  return {
    async show(ctx: Context): Promise<void> {
      const viewer = await readViewer(ctx, services);
      if (viewer === null) return redirect(ctx, `/login?next=${encodeURIComponent(ctx.path)}`);
      await renderErrors(ctx, viewer, async () => {
        const workspace = await workspaces.require(viewer.session.workspace);
        const members = await accounts.membersOf(workspace.name);
        sendPage(ctx, page({
          title: `Workspace ${workspace.name}`,
          section: 'workspace',
          viewer,
          body: html`<section class="card" aria-labelledby="about">
  <h2 id="about">About</h2>
  <dl class="facts"><dt>Name</dt><dd>${workspace.name}</dd><dt>Plan</dt><dd>${workspace.plan}</dd><dt>Created</dt><dd><time datetime="${workspace.createdAt}">${workspace.createdAt.slice(0, 10)}</time></dd></dl>
</section>
<section class="card" aria-labelledby="members">
  <h2 id="members">Members</h2>
  <div class="scroll"><table>
    <thead><tr><th scope="col">Name</th><th scope="col">Account</th><th scope="col">Role</th></tr></thead>
    <tbody>${members.map((member) => html`<tr><td>${member.name}${member.id === viewer.account.id ? ' (you)' : ''}</td><td><code>${member.id}</code></td><td>${member.role}</td></tr>`)}</tbody>
  </table></div>
</section>`,
        }));
      });
    },
  };
}
