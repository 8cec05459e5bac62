/**
 * What keeps the dashboard safe from pages of apps served on the same host
 * and from other sites: no script's request is signed in, the sign-in form's
 * CSRF check needs its cookie, `next` never leads elsewhere, a removed
 * member gets no new token, a member revokes only their own tokens.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { localPath } from '../../core/http/dashboard/respond.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { SvcError } from '../../core/model/errors.js';
import { testConfig } from '../helpers/config.js';

describe('localPath() (where sign-in goes on to)', () => {
  it('keeps a path of this site, query included, and turns anything that could lead elsewhere into the dashboard', () => {
    assert.equal(localPath('/device?user_code=BCDF-GHJK'), '/device?user_code=BCDF-GHJK');
    assert.equal(localPath('/dashboard/settings/tokens'), '/dashboard/settings/tokens');
    for (const away of [
      '//evil.example',
      '/\\evil.example',
      '/\t/evil.example',
      '/\n/evil.example',
      'https://evil.example',
      'evil',
      42,
      undefined,
    ]) {
      assert.equal(localPath(away), '/dashboard', JSON.stringify(away));
    }
    assert.equal(localPath('/\u2028x'), '/%E2%80%A8x', 'other characters stay, percent-encoded, on this site');
  });
});

describe('dashboard security (in-process platform)', function () {
  this.timeout(60_000);
  let platform: Platform;
  let owner: string;
  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    owner = (await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default')).secret;
  });
  after(async () => platform?.close());

  it("answers a browser script's request (Fetch Metadata, not a navigation) as if nobody were signed in, so a page on this host cannot read it", async () => {
    // What a browser sends for a script's fetch from a page of this host (Node's fetch sends Sec-Fetch-Mode: cors itself).
    const script = await fetch(`${platform.url}/dashboard/settings/tokens`, {
      headers: { Cookie: `svc_session=${owner}`, 'Sec-Fetch-Site': 'same-origin' },
      redirect: 'manual',
    });
    assert.equal(script.status, 303);
    assert.match(script.headers.get('location')!, /^\/login/);
    // No Fetch Metadata: no browser, and no script of a page.
    const navigation = await fetch(`${platform.url}/dashboard/settings/tokens`, {
      headers: { Cookie: `svc_session=${owner}` },
      redirect: 'manual',
    });
    assert.equal(navigation.status, 200);
    assert.equal(
      navigation.headers.get('cross-origin-opener-policy'),
      'same-origin',
      'a page that opens the dashboard gets no handle on it',
    );
  });

  it("refuses the log stream without the session's CSRF token in its URL", async () => {
    const answer = await fetch(`${platform.url}/dashboard/apps/none/workloads/none/logs/events`, {
      headers: { Cookie: `svc_session=${owner}`, 'Sec-Fetch-Site': 'same-origin' },
    });
    assert.equal(answer.status, 403);
  });

  it("refuses the Calls page's live maps without the session's CSRF token in their URL, and without a session", async () => {
    const noToken = await fetch(`${platform.url}/dashboard/apps/none/maps`, {
      headers: { Cookie: `svc_session=${owner}`, 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'cors' },
    });
    assert.equal(noToken.status, 403);
    assert.equal((await fetch(`${platform.url}/dashboard/apps/none/maps?csrf=x`)).status, 401);
  });

  it('ends an open log stream once its session is gone (signed out), so no line follows sign-out', async function () {
    this.timeout(30_000);
    const manifest = await loadManifest({
      target: path.join(packageRoot, 'test', 'fixtures', 'dashboard', 'app.py'),
      python: platform.config.python,
    });
    await platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: 'default',
      stage: 'deployed',
      principal: null,
    });
    const { secret, session } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default');
    const stream = await fetch(`${platform.url}/dashboard/apps/board/workloads/say/logs/events?csrf=${encodeURIComponent(session.csrf)}`, {
      headers: { Cookie: `svc_session=${secret}` },
    });
    assert.equal(stream.status, 200);
    await platform.controlPlane.sessions.end(secret);
    const text = await stream.text(); // ends only if the server ends it (within its check interval)
    assert.match(text, /event: end\ndata: \{"reason":"signed_out"\}/);
  });

  it('Settings → Tokens refuses an expiry date that does not exist, and a name that is no text, saying why', async () => {
    /** Posts the new-token form as JSON (the form's own CSRF and one-time ids), with these fields. */
    const form = async (fields: Record<string, unknown>) => {
      const page = await fetch(`${platform.url}/dashboard/settings/tokens`, { headers: { Cookie: `svc_session=${owner}` } });
      const html = await page.text();
      const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
      const once = /name="_once" value="([^"]+)"/.exec(html)![1]!;
      return fetch(`${platform.url}/dashboard/settings/tokens`, {
        method: 'POST',
        headers: { Cookie: `svc_session=${owner}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ _csrf: csrf, _once: once, ...fields }),
      });
    };
    const badDay = await form({ name: 'x', expires: '2030-02-30' });
    assert.equal(badDay.status, 400);
    assert.match(await badDay.text(), /is not a date like 2030-01-31/);
    const answer = await form({ name: 42 });
    assert.equal(answer.status, 400);
    assert.doesNotMatch(await answer.text(), /id="secret"/, 'no token was made');
  });

  it('refuses a sign-in post with an empty CSRF field and no CSRF cookie (as from another site)', async () => {
    const link = await platform.controlPlane.signIn.issue(platform.controlPlane.owner.account.id);
    const answer = await fetch(`${platform.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: '', link: link.secret }).toString(),
    });
    assert.equal(answer.status, 403);
    assert.equal(
      answer.headers.getSetCookie().some((c) => c.startsWith('svc_session=')),
      false,
    );
  });

  it('makes no token for a member removed from the workspace, whatever started it; a member revokes only their own tokens', async () => {
    const { members, tokens } = platform.controlPlane;
    const asOwner = { workspace: 'default', subject: platform.controlPlane.owner.account.id };
    const { member } = await members.invite({ name: 'Mallory' }, asOwner);
    const asMallory = { workspace: 'default', subject: member.id };
    const own = await tokens.create({ name: 'mine' }, asMallory);
    const ownerTokens = (await tokens.list(asOwner)).filter((t) => t.subject === asOwner.subject);
    await assert.rejects(
      tokens.revoke(ownerTokens[0]!.id, asMallory, 'member'),
      (error: unknown) => error instanceof SvcError && error.code === 'forbidden',
    );
    await tokens.revoke(own.token.id, asMallory, 'member');
    await members.remove(member.id, asOwner);
    await assert.rejects(
      tokens.create({ name: 'spare' }, asMallory),
      (error: unknown) => error instanceof SvcError && error.code === 'forbidden',
    );
  });
});
