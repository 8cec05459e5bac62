/**
 * The dashboard's finer promises, on an in-process platform: Secure cookies
 * behind HTTPS, rate-limited sign-in, keyboard use and a phone-width screen
 * in a real Chromium, and a workload's Stop and Delete after confirming.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { seriousViolations } from '../browser/axe.js';
import { launchChromium, needChromium, screenshot } from '../browser/chromium.js';
import { testConfig } from '../helpers/config.js';
import { freePort } from '../helpers/free-port.js';

/** A signed-in session's cookie for the owner, made the way the sign-in page makes it. */
async function ownerSession(platform: Platform): Promise<string> {
  const { secret } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default');
  return secret;
}

describe('dashboard details: cookies behind HTTPS, sign-in attempts', function () {
  this.timeout(60_000);
  let platform: Platform;
  /** Where it listens: its public URL is an HTTPS proxy's, as in front of a real server. */
  let local: string;
  before(async () => {
    const port = await freePort();
    local = `http://127.0.0.1:${port}`;
    platform = await startPlatform({ config: testConfig({ port, publicUrl: 'https://svc.example' }) });
  });
  after(async () => platform?.close());

  /** The sign-in form's CSRF cookie and field, as a browser gets them. */
  async function signInForm(): Promise<{ cookie: string; csrf: string }> {
    const page = await fetch(`${local}/login`);
    const cookie = page.headers.getSetCookie().find((c) => c.startsWith('svc_login_csrf='))!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    return { cookie, csrf };
  }

  it('marks the session cookie Secure, HttpOnly and SameSite=Lax when browsers reach svc over HTTPS (publicUrl https:)', async () => {
    const link = await platform.controlPlane.signIn.issue(platform.controlPlane.owner.account.id);
    const form = await signInForm();
    assert.match(form.cookie, /; secure/i);
    const answer = await fetch(`${local}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: form.cookie.split(';')[0]! },
      body: new URLSearchParams({ _csrf: form.csrf, link: `https://svc.example/login#${link.secret}`, next: '/dashboard' }).toString(),
    });
    assert.equal(answer.status, 303);
    const session = answer.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    assert.match(session, /; secure/i);
    assert.match(session, /; httponly/i);
    assert.match(session, /; samesite=lax/i);
    assert.match(session, /; path=\//i);
  });

  it('rate-limits sign-in attempts from one address: 429 with Retry-After after 10 a minute', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const form = await signInForm();
      const answer = await fetch(`${local}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: form.cookie.split(';')[0]! },
        body: new URLSearchParams({ _csrf: form.csrf, link: 'x'.repeat(43) }).toString(),
      });
      statuses.push(answer.status);
      if (answer.status === 429) assert.ok(Number(answer.headers.get('retry-after')) >= 1);
    }
    assert.ok(
      statuses.slice(0, 9).every((s) => s === 401),
      `wrong links are refused: ${statuses}`,
    );
    assert.equal(statuses.at(-1), 429, `then the address waits: ${statuses}`);
  });
});

describe('dashboard details in Chromium: keyboard, phone width, stop and delete', function () {
  this.timeout(120_000);
  let platform: Platform;
  let browser: Browser;
  let page: Page;

  before(async function () {
    needChromium(this);
    platform = await startPlatform({ config: testConfig() });
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
    browser = await launchChromium();
    const context = await browser.newContext({ bypassCSP: true });
    await context.addCookies([
      { name: 'svc_session', value: await ownerSession(platform), url: platform.url, httpOnly: true, sameSite: 'Lax' },
    ]);
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await platform?.close();
  });

  it('is usable by keyboard: the first Tab reaches the skip link, which moves focus to the content, and the focus is visible', async () => {
    await page.goto(`${platform.url}/dashboard`);
    await page.keyboard.press('Tab');
    assert.equal(
      await page.evaluate(
        () => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent,
      ),
      'Skip to content',
    );
    const outline = await page.evaluate(() => {
      const g = globalThis as unknown as { document: { activeElement: unknown }; getComputedStyle(e: unknown): { outlineStyle: string } };
      return g.getComputedStyle(g.document.activeElement).outlineStyle;
    });
    assert.notEqual(outline, 'none', 'a visible focus ring');
    await page.keyboard.press('Enter');
    // Following the link is a navigation of its own: under load, page.url() can lag the key press.
    await page.waitForURL((url) => url.hash === '#main', { timeout: 10_000 });
    assert.equal(new URL(page.url()).hash, '#main');
  });

  it('fits a phone-width screen: no page scrolls sideways, tables scroll inside their box', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    for (const [name, pagePath] of [
      ['phone-apps', '/dashboard'],
      ['phone-app', '/dashboard/apps/board'],
      ['phone-calls', '/dashboard/apps/board/calls'],
      ['phone-tokens', '/dashboard/settings/tokens'],
      ['phone-workspace', '/dashboard/workspace'],
    ] as const) {
      await page.goto(`${platform.url}${pagePath}`);
      const width = await page.evaluate(
        () => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth,
      );
      assert.ok(width <= 360, `${pagePath} is ${width} px wide at 360`);
      assert.deepEqual(await seriousViolations(page), [], `axe-core on ${pagePath} at 360 px`);
      await screenshot(page, name);
    }
    await page.setViewportSize({ width: 1280, height: 720 });
  });

  it('stops a workload, then deletes it, each after a confirmation', async () => {
    await page.goto(`${platform.url}/dashboard/apps/board`);
    await page.click('a:has-text("Stop")');
    await page.waitForURL(/\/workloads\/say\/stop$/);
    assert.match((await page.textContent('main'))!, /containers stop/);
    await page.click('button:has-text("Stop say of board")');
    await page.waitForURL(/\/dashboard\/apps\/board\?done=/);
    assert.match((await page.locator('tr', { hasText: 'say' }).textContent())!, /stopped/);
    assert.equal((await fetch(`${platform.url}/default/board/say/say`)).status, 503);
    await page.click('a:has-text("Delete")');
    await page.click('button:has-text("Delete say of board")');
    await page.waitForURL(/\/dashboard\/apps\/board\?done=/);
    assert.match((await page.textContent('[role="status"]'))!, /Say deleted/);
    assert.equal(await page.locator('tr', { hasText: 'say' }).count(), 0);
    assert.deepEqual(platform.deployments.get({ workspace: 'default', app: 'board', stage: 'deployed' })?.workloads, []);
    assert.equal(
      (await fetch(`${platform.url}/default/board/say/say`)).status,
      401,
      'its URL is free: nothing answers (and without a token, that is 401)',
    );
  });
});
