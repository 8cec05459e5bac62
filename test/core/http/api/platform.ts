/** A platform for API tests: real gateway, real file store in a fresh data dir, no deployments. */
import { startPlatform, type Platform } from '../../../../core/platform/platform.js';
import { testConfig } from '../../../helpers/config.js';
import { apiClient, type Call } from './client.js';

export interface ApiFixture {
  readonly platform: Platform;
  readonly call: Call;
  /** The owner token: an owner of `default`. */
  readonly owner: string;
  /** Unexpected errors the platform reported (bugs); tests assert there are none. */
  readonly reports: unknown[];
}

export async function startApiPlatform(): Promise<ApiFixture> {
  const reports: unknown[] = [];
  const platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
  return { platform, call: apiClient(platform.url), owner: platform.ownerToken.secret, reports };
}

/** A token of `workspace` acting as `subject`, an account made a member of it here when it is not one (no token is made for a non-member). */
export async function tokenFor(
  platform: Platform,
  workspace: string,
  subject = 'acc_00000000000000aa',
): Promise<{ secret: string; id: string }> {
  const { workspaces, accounts } = platform.controlPlane;
  if ((await workspaces.get(workspace)) === null) await workspaces.create(workspace);
  if ((await accounts.get(subject)) === null) {
    await accounts.create({
      id: subject,
      name: `test ${subject}`,
      role: 'member',
      workspaces: [workspace],
      createdAt: new Date().toISOString(),
    });
  } else {
    await accounts.update(subject, (account) =>
      account.workspaces.includes(workspace) ? account : { ...account, workspaces: [...account.workspaces, workspace] },
    );
  }
  const { secret, token } = await platform.controlPlane.tokens.create({ name: `test ${workspace}` }, { workspace, subject });
  return { secret, id: token.id };
}
