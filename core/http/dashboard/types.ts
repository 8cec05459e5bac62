/** What the dashboard's pages use, and who is looking at one. */
import type { Session } from '../../services/accounts/sessions.js';
import type { Account } from '../../services/accounts/types.js';
import type { ApiServices } from '../api/types.js';
import type { Principal } from '../../model/principal.js';

/** The API's services: the control plane (with the sessions), deployments, logs, and the public URL. */
export type DashboardServices = ApiServices;

/** A signed-in browser: its session, the account and the principal it acts as (the session's workspace). */
export interface Viewer {
  readonly secret: string;
  readonly session: Session;
  readonly account: Account;
  readonly principal: Principal;
}
