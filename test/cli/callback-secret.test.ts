import assert from 'node:assert/strict';
import { workspaceCallbackSecret } from '../../cli/commands/workspace.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { testConfig } from '../helpers/config.js';
import { tokenFor } from '../core/http/api/platform.js';
import { capture, rejectsWith } from './fixture.js';

/**
 * `svc workspace callback-secret [--rotate]` in-process against a real platform over real HTTP:
 * the signing secret of completion callbacks, the same until rotated, for owners only.
 */
describe('CLI workspace callback-secret against a real server', function () {
  this.timeout(60_000);
  let platform: Platform;
  let env: Record<string, string>;

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    env = { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret };
  });
  after(async () => platform?.close());

  it('prints the secret, the same until --rotate makes a new one; a member is refused', async () => {
    const first = capture({ env });
    await workspaceCallbackSecret(first.context);
    const secret = first.stdout().trim();
    assert.match(secret, /^svcwh_[A-Za-z0-9_-]{43}$/);
    const again = capture({ env });
    await workspaceCallbackSecret(again.context, { json: true });
    assert.equal(JSON.parse(again.stdout()).secret, secret);

    const rotated = capture({ env });
    await workspaceCallbackSecret(rotated.context, { rotate: true });
    assert.match(rotated.stderr(), /made a new callback signing secret/);
    assert.notEqual(rotated.stdout().trim(), secret);
    assert.equal((await platform.controlPlane.callbackSecrets.get('default')).secret, rotated.stdout().trim());

    const member = capture({ env: { ...env, SVC_TOKEN: (await tokenFor(platform, 'default')).secret } });
    const refused = await rejectsWith(workspaceCallbackSecret(member.context));
    assert.equal(refused.code, 'forbidden');
    assert.match(refused.message, /only an owner of workspace default/);
  });
});
