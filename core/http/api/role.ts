/**
 * The role a principal acts with: its account's role in the principal's
 * workspace when the account may use it, else `member`. Principals that are not
 * accounts (another plugin's service identities) are members too.
 */
import type { Accounts } from '../../services/accounts/accounts.js';
import { roleIn, type Role } from '../../services/accounts/types.js';
import type { Principal } from '../../infra/plugin/types.js';

export async function roleOf(principal: Principal, accounts: Pick<Accounts, 'get'>): Promise<Role> {
  const account = await accounts.get(principal.subject);
  return account !== null && account.workspaces.includes(principal.workspace) ? roleIn(account, principal.workspace) : 'member';
}
