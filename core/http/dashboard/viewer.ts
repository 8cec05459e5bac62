/** What every signed-in page and form of the dashboard does first. */
import { SvcError } from '../../model/errors.js';
import { redirect } from './respond.js';
import { readViewer, type Context } from './session-cookie.js';
import type { DashboardServices, Viewer } from './types.js';

/** The signed-in viewer, or null after answering with the sign-in page's address (coming back here afterwards). */
export async function signedIn(ctx: Context, services: DashboardServices): Promise<Viewer | null> {
  const viewer = await readViewer(ctx, services);
  if (viewer === null) redirect(ctx, `/login?next=${encodeURIComponent(ctx.url)}`);
  return viewer;
}

/**
 * Claims the form's one-time id (`_once`) for this session: a form whose
 * effect must not happen twice (a reload of its answer page sends it again)
 * gets `conflict` the second time.
 */
export async function claimOnce(services: DashboardServices, viewer: Viewer, body: Readonly<Record<string, unknown>>): Promise<void> {
  const id = body._once;
  if (typeof id !== 'string' || !(await services.controlPlane.sessions.claimForm(viewer.secret, id))) {
    throw new SvcError('conflict', 'this form was sent before, so it did nothing the second time.');
  }
}
