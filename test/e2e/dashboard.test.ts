/**
 * The dashboard in a real Chromium against a real `svc server` child process,
 * as a person with only the README would use it: sign in with the first-start
 * link, create a token under Settings → Tokens, use it with curl, revoke it,
 * approve and deny `svc login` (a child process) on the device page, sign
 * out. Every page gets an axe-core check and a screenshot
 * (.cache/test-output/dashboard/). The tests run in order.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { packageRoot } from '../../core/model/paths.js';
import { seriousViolations } from '../browser/axe.js';
import { launchChromium, needChromium, screenshot } from '../browser/chromium.js';
import { tempDir, testCacheDir } from '../helpers/config.js';
import { until } from '../helpers/until.js';

const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
const run = promisify(execFile);

describe('the dashboard in Chromium (svc server as a child process)', function () {
  this.timeout(120_000);
  let server: ChildProcess;
  let url: string;
  let signInLink: string;
  let env: NodeJS.ProcessEnv;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  /** Every page a person sees passes axe-core without serious violations, and is kept as a screenshot. */
  async function look(name: string): Promise<void> {
    assert.deepEqual(await seriousViolations(page), [], `axe-core on ${name}`);
    await screenshot(page, name);
  }

  /** The counts of the one map on the Calls page, as its cells show them. */
  async function counts(): Promise<Record<string, string>> {
    const cells = await page
      .locator('tr[data-map] [data-count]')
      .evaluateAll((all) => all.map((cell) => [(cell as unknown as { dataset: { count: string } }).dataset.count, cell.textContent]));
    return Object.fromEntries(cells);
  }

  /** `curl` as a person runs it: the status of GET /api/v1/whoami with this token. */
  async function curlWhoami(token: string): Promise<number> {
    const { stdout } = await run('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-H',
      `Authorization: Bearer ${token}`,
      `${url}/api/v1/whoami`,
    ]);
    return Number(stdout);
  }

  /** `svc login --no-browser` as a child process, once it printed its link and code. */
  async function startLogin(): Promise<{
    child: ChildProcess;
    link: string;
    code: string;
    output: () => string;
    exited: Promise<number | null>;
  }> {
    const child = spawn(process.execPath, [cli, 'login', '--server', url, '--no-browser'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const { link, code } = await new Promise<{ link: string; code: string }>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const found = /\n {2}(http:\/\/\S+\/device\?user_code=\S+)\n\n {2}code: ([A-Z]{4}-[A-Z]{4})/.exec(output);
        if (found) resolve({ link: found[1]!, code: found[2]! });
      });
      child.once('exit', (status) => reject(new Error(`svc login exited with ${status}:\n${output}`)));
    });
    return { child, link, code, output: () => output, exited };
  }

  before(async function () {
    needChromium(this);
    const dataDir = tempDir('svc-dashboard-');
    const { SVC_SERVER: _server, SVC_TOKEN: _token, ...inherited } = process.env;
    env = {
      ...inherited,
      SVC_CACHE_DIR: testCacheDir,
      NO_COLOR: '1',
      SVC_CONFIG_DIR: tempDir('svc-dashboard-config-'),
      SVC_DATA_DIR: tempDir('svc-dashboard-nodata-'),
    };
    server = spawn(process.execPath, [cli, 'server', '--port', '0', '--data-dir', dataDir], {
      env: { ...env, SVC_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    server.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    [url, signInLink] = await new Promise<[string, string]>((resolve, reject) => {
      server.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const listening = /listening on (http:\/\/\S+)/.exec(out)?.[1];
        const link = /sign in: +(http:\/\/\S+\/login#\S+)/.exec(out)?.[1];
        if (listening && link) resolve([listening, link]);
      });
      server.once('exit', (code) => reject(new Error(`svc server exited with ${code}:\n${out}\n${err}`)));
    });
    browser = await launchChromium();
    // bypassCSP only so that axe-core's script can be added; the pages' own CSP is tested on its headers.
    context = await browser.newContext({ bypassCSP: true });
    page = await context.newPage();
  });

  after(async () => {
    await browser?.close();
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
  });

  it("opens the sign-in page at the server's root, and signs in with the one-time link", async () => {
    await page.goto(`${url}/`);
    assert.equal(new URL(page.url()).pathname, '/login');
    await look('sign-in');
    await page.goto(signInLink);
    await page.waitForURL(`${url}/dashboard`);
    assert.equal(await page.textContent('h1'), 'Apps');
    assert.match((await page.textContent('.who'))!, /Workspace default/);
    await look('apps-empty');
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'svc_session');
    assert.ok(cookie, 'a session cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.secure, false, 'plain http here: Secure would make the browser drop it');
  });

  it('explains that a used link does not sign in again', async () => {
    const stranger = await browser.newContext();
    try {
      const other = await stranger.newPage();
      await other.goto(signInLink);
      await other.waitForSelector('[role="alert"]');
      assert.match((await other.textContent('[role="alert"]'))!, /invalid, expired or already used/);
      assert.equal(new URL(other.url()).pathname, '/login');
    } finally {
      await stranger.close();
    }
  });

  it('Settings → Tokens: creates a token shown once, which works with curl until it is revoked after a confirmation', async () => {
    await page.click('nav >> text=Settings → Tokens');
    await page.waitForURL(`${url}/dashboard/settings/tokens`);
    await look('tokens');
    await page.fill('#token-name', 'ci');
    await page.click('button:has-text("Create token")');
    await page.waitForSelector('#secret');
    const secret = await page.inputValue('#secret');
    assert.match(secret, /^svc_[A-Za-z0-9]{40}$/);
    assert.equal(await page.isVisible('button[data-copy="secret"]'), true, 'the copy button shows where the clipboard works');
    await look('token-created');
    assert.equal(await curlWhoami(secret), 200);
    const row = page.locator('tr', { hasText: 'ci' });
    assert.ok(!(await row.textContent())!.includes(secret), 'the list never shows a secret');

    await page.reload(); // sends the form again
    assert.equal(await page.locator('#secret').count(), 0, 'shown once: not after a reload');
    assert.match((await page.textContent('[role="alert"]'))!, /sent before, so no second token/);
    assert.equal(await page.locator('tr', { hasText: 'ci' }).count(), 1, 'one token, not two');
    await page.goto(`${url}/dashboard/settings/tokens`);
    assert.match((await row.textContent())!, /UTC.*UTC.*never/s, 'created, last used (just now, by curl), never expires');
    await row.locator('a', { hasText: 'Revoke' }).click();
    await page.waitForURL(/\/revoke$/);
    await look('token-revoke');
    await page.click('button:has-text("Revoke ci")');
    await page.waitForURL(/\/dashboard\/settings\/tokens\?revoked=ci$/);
    assert.match((await page.textContent('[role="status"]'))!, /Token ci is revoked/);
    assert.equal(await page.locator('tr', { hasText: 'ci' }).count(), 0);
    assert.equal(await curlWhoami(secret), 401, 'refused on the next request');
  });

  it('Settings → Secrets: creates a secret from KEY=VALUE lines, lists its keys and never renders a value; deletes it after a confirmation', async () => {
    const value = `dashboard-${Date.now().toString(36)}-value`;
    await page.click('nav >> text=Settings → Secrets');
    await page.waitForURL(`${url}/dashboard/settings/secrets`);
    await look('secrets');
    await page.fill('#secret-name', 'db');
    await page.fill('#secret-values', `DATABASE_URL="${value}"\n# a comment\nPOOL=5\n`);
    await page.click('button:has-text("Create secret")');
    await page.waitForSelector('[role="status"]');
    assert.match((await page.textContent('[role="status"]'))!, /The secret db is stored with 2 keys/);
    const row = page.locator('tbody tr', { hasText: 'db' });
    assert.match((await row.textContent())!, /DATABASE_URL, POOL/);
    assert.ok(!(await page.content()).includes(value), 'the page holds no value');
    await look('secret-created');
    // A refused form comes back empty: what was typed is not rendered back either.
    await page.fill('#secret-name', 'db');
    await page.fill('#secret-values', `OTHER=${value}`);
    await page.click('button:has-text("Create secret")');
    await page.waitForSelector('[role="alert"]');
    assert.match((await page.textContent('[role="alert"]'))!, /already has a secret db/);
    assert.ok(!(await page.content()).includes(value), 'the refusal holds no value');
    await row.locator('a', { hasText: 'Delete' }).click();
    await page.waitForURL(/\/delete$/);
    await look('secret-delete');
    await page.click('button:has-text("Delete db")');
    await page.waitForURL(/\/dashboard\/settings\/secrets\?deleted=db$/);
    assert.equal(await page.locator('tbody tr', { hasText: 'db' }).count(), 0);
  });

  it("refuses a form without the session's CSRF token, and one posted from another site", async () => {
    const noToken = await page.request.post(`${url}/dashboard/settings/tokens`, { form: { name: 'sneaky' }, maxRedirects: 0 });
    assert.equal(noToken.status(), 403);
    assert.match(await noToken.text(), /no valid CSRF token/);
    const csrf = await page.getAttribute('input[name="_csrf"]', 'value');
    const foreign = await page.request.post(`${url}/dashboard/settings/tokens`, {
      form: { name: 'sneaky', _csrf: csrf! },
      headers: { Origin: 'http://evil.example' },
      maxRedirects: 0,
    });
    assert.equal(foreign.status(), 403);
    await page.reload();
    assert.equal(await page.locator('tr', { hasText: 'sneaky' }).count(), 0, 'no token was created');
  });

  it('approves svc login on the device page: the page shows the code and client, and the CLI ends signed in', async () => {
    const login = await startLogin();
    await page.goto(login.link);
    assert.equal(await page.textContent('#user-code'), login.code);
    assert.match((await page.textContent('.facts'))!, /Client/);
    assert.match((await page.textContent('.facts'))!, /Workspacedefault/);
    await look('device');
    await page.click('button:has-text("Approve")');
    await page.waitForSelector('[role="status"]');
    assert.match((await page.textContent('[role="status"]'))!, /Approved/);
    await look('device-approved');
    assert.equal(await login.exited, 0, login.output());
    assert.match(login.output(), /Signed in to http:\/\/127\.0\.0\.1:\d+ as acc_\w+ \(owner\) in workspace default\./);
    const whoami = await run(process.execPath, [cli, 'whoami'], { env });
    assert.match(whoami.stdout, /default/);
  });

  it('denies one: the CLI is told and saves nothing new', async () => {
    const login = await startLogin();
    await page.goto(login.link);
    await page.click('button:has-text("Deny")');
    await page.waitForSelector('[role="status"]');
    assert.match((await page.textContent('[role="status"]'))!, /Denied/);
    assert.notEqual(await login.exited, 0);
    assert.match(login.output(), /denied/i);
  });

  it('shows the workspace: its name, plan and members', async () => {
    await page.click('nav >> text=Workspace');
    await page.waitForURL(`${url}/dashboard/workspace`);
    assert.equal(await page.textContent('h1'), 'Workspace default');
    assert.match((await page.textContent('.facts'))!, /Planfree/);
    assert.match((await page.textContent('table'))!, /owner \(you\).*owner/s);
    await look('workspace');
  });

  it('explains a code that is unknown or already decided', async () => {
    await page.goto(`${url}/device?user_code=BCDF-GHJK`);
    assert.match((await page.textContent('[role="alert"]'))!, /no sign-in request with the code BCDF-GHJK/);
    await look('device-unknown');
  });

  it("Apps: a deployed app with its workload's status, version, URL and containers; its logs follow live", async () => {
    const deployed = await run(process.execPath, [cli, 'deploy', path.join(packageRoot, 'test', 'fixtures', 'dashboard', 'app.py')], {
      env,
    });
    const sayUrl = /https?:\/\/\S+\/say/.exec(deployed.stdout)?.[0];
    assert.ok(sayUrl, deployed.stdout);
    await page.goto(`${url}/dashboard`);
    const row = page.locator('tr', { hasText: 'say' });
    assert.match((await row.textContent())!, /endpoint/);
    assert.match((await row.textContent())!, /running|scaled to zero|starting/);
    assert.match((await row.textContent())!, /v1/);
    assert.match((await row.textContent())!, /of at most 1/);
    assert.match((await row.textContent())!, /\/default\/board\/say\/say/);
    await look('apps');
    await page.click('h2 >> text=board');
    await page.waitForURL(`${url}/dashboard/apps/board`);
    await look('app');
    await page.click('a:has-text("Logs")');
    await page.waitForURL(`${url}/dashboard/apps/board/workloads/say/logs`);
    await page.waitForSelector('text=Following');
    const marker = `live-${Date.now()}`;
    assert.equal((await fetch(`${sayUrl}?text=${marker}`)).status, 200);
    await page.locator('#log', { hasText: `said ${marker}` }).waitFor({ timeout: 20_000 });
    await look('logs');
  });

  it('pauses and resumes the app, each after a confirmation; paused, its URL answers 503 app_paused', async () => {
    await page.goto(`${url}/dashboard/apps/board`);
    await page.click('a:has-text("Pause board")');
    await page.waitForURL(`${url}/dashboard/apps/board/pause`);
    await look('app-pause');
    await page.click('button:has-text("Pause the app board")');
    await page.waitForURL(/\/dashboard\/apps\/board\?done=/);
    assert.match((await page.textContent('[role="status"]'))!, /Board paused/);
    assert.match((await page.locator('tr', { hasText: 'say' }).textContent())!, /paused/);
    const paused = await fetch(`${url}/default/board/say/say`);
    assert.equal(paused.status, 503);
    assert.equal(((await paused.json()) as { error: { code: string } }).error.code, 'app_paused');
    await page.click('a:has-text("Resume board")');
    await page.click('button:has-text("Resume the app board")');
    await page.waitForURL(/\/dashboard\/apps\/board\?done=/);
    assert.doesNotMatch((await page.locator('tr', { hasText: 'say' }).textContent())!, /paused/);
    assert.equal((await fetch(`${url}/default/board/say/say`)).status, 200);
  });

  it('Calls: the calls newest first with their statuses and pages, and a map whose counts change live until Ctrl-C cancels the rest', async function () {
    this.timeout(180_000);
    const { token } = JSON.parse(await readFile(path.join(env.SVC_CONFIG_DIR!, 'credentials.json'), 'utf8')) as { token: string };
    const api = async (method: string, target: string, body?: unknown) => {
      const answer = await fetch(`${url}/api/v1${target}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return (await answer.json()) as any;
    };
    const fixture = path.join(packageRoot, 'test', 'fixtures', 'dashboard-calls');
    await run(process.execPath, [cli, 'deploy', path.join(fixture, 'app.py')], { env });
    const reason = '<b>no</b> & "never"';
    const squared = (await api('POST', '/apps/ledger/functions/square/calls', { x: 7 })).call_id as string;
    const refused = (await api('POST', '/apps/ledger/functions/refuse/calls', { reason })).call_id as string;
    for (const id of [squared, refused]) {
      await until(
        `the call ${id} ends`,
        async () => ['succeeded', 'failed'].includes((await api('GET', `/calls/${id}`)).call.status),
        90_000,
      );
    }

    // A map of four inputs held by tickets, run by the Python client as a person would, then interrupted.
    const tickets = tempDir('svc-dashboard-tickets-');
    const script = 'import sys, app\nfor result in app.turnstile.map([sys.argv[1]] * 4):\n    print(result, flush=True)';
    const mapper = spawn(process.env.SVC_PYTHON ?? 'python3', ['-c', script, tickets], {
      cwd: fixture,
      env: { ...env, PYTHONPATH: path.join(packageRoot, 'sdk', 'python'), SVC_SERVER: url, SVC_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let printed = '';
    mapper.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    mapper.stderr!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const mapperExit = new Promise((resolve) => mapper.once('exit', resolve));
    const count = (name: string) => page.locator(`tr[data-map] [data-count="${name}"]`);
    await until(
      'the map runs its first input',
      async () => {
        await page.goto(`${url}/dashboard/apps/ledger/calls`);
        return (await count('running').count()) === 1 && (await count('running').textContent()) === '1';
      },
      { timeoutMs: 90_000, intervalMs: 500, context: () => printed },
    );
    assert.deepEqual(await counts(), { succeeded: '0', failed: '0', running: '1', queued: '3', cancelled: '0', received: '4' });
    await look('calls');
    await page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true));
    writeFileSync(path.join(tickets, 'a'), '');
    const settled = async (expected: Record<string, string>) => {
      const shown = await counts();
      return Object.entries(expected).every(([name, value]) => shown[name] === value);
    };
    await until('one input done and the next running, shown live', () => settled({ succeeded: '1', running: '1', queued: '2' }), {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    mapper.kill('SIGINT');
    await page.locator('tr[data-map] [data-count="cancelled"]', { hasText: '2' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.textContent('tr[data-map] [data-state]'), 'cancelled, finishing');
    writeFileSync(path.join(tickets, 'b'), ''); // the input running at the Ctrl-C finishes
    await page.locator('#maps-state', { hasText: 'Every map has ended' }).waitFor({ timeout: 30_000 });
    assert.deepEqual(await counts(), { succeeded: '2', failed: '0', running: '0', queued: '0', cancelled: '2', received: '4' });
    assert.equal(await page.textContent('tr[data-map] [data-state]'), 'cancelled');
    assert.equal(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded), true, 'live, not reloaded');
    await mapperExit;

    const rows = page.locator('tr[data-call]');
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: { call: string } }).dataset.call)), [
      refused,
      squared,
    ]);
    assert.match((await page.locator(`tr[data-call="${squared}"]`).textContent())!, /square\s*succeeded.*1\/1/s);
    const failedRow = page.locator(`tr[data-call="${refused}"]`);
    assert.match((await failedRow.textContent())!, /refuse\s*failed/);
    assert.ok((await failedRow.textContent())!.includes(`ValueError: ${reason}`), 'the message, as text');
    assert.ok(!(await page.content()).includes('<b>no</b>'), 'escaped, never markup');
    await page.selectOption('#call-status', 'failed');
    await page.click('button:has-text("Show")');
    await page.waitForURL(`${url}/dashboard/apps/ledger/calls?status=failed`);
    assert.equal(await rows.count(), 1);
    await page.goto(`${url}/dashboard/apps/ledger/calls?status=done`);
    assert.match((await page.textContent('[role="alert"]'))!, /status="done" is not a call status; it is one of queued, running/);
    await page.goBack();
    await page.click(`a:has-text("${refused}")`);
    await page.waitForURL(`${url}/dashboard/apps/ledger/calls/${refused}`);
    assert.equal(await page.textContent('#call-status'), 'failed');
    assert.equal(await page.textContent('#call-error'), `ValueError: ${reason}`);
    assert.match((await page.textContent('.log'))!, /#1 stdout: about to refuse/);
    await look('call');
    await page.goto(`${url}/dashboard/apps/board/calls/${refused}`);
    assert.equal(await page.textContent('h1'), 'Not found', "a call of ledger is no call of board's");
  });

  it('creates a second workspace, invites a member there, who signs in and sees only that workspace; removing them signs them out', async () => {
    await page.goto(`${url}/dashboard/workspace`);
    await page.fill('#new-workspace', 'team-b');
    await page.click('button:has-text("Create workspace")');
    await page.waitForURL(/\/dashboard\/workspace\?done=/);
    assert.equal(await page.textContent('h1'), 'Workspace team-b');
    assert.match((await page.textContent('.who'))!, /Workspace team-b/);
    await page.fill('#invite-name', 'Ada');
    await page.selectOption('#invite-role', 'member');
    await page.click('button:has-text("Invite")');
    await page.waitForSelector('#invitation');
    const invitation = await page.inputValue('#invitation');
    assert.match(invitation, new RegExp(`^${url}/login#[A-Za-z0-9_-]{43}$`));
    await look('workspace-invited');

    const ada = await browser.newContext({ bypassCSP: true });
    try {
      const adaPage = await ada.newPage();
      await adaPage.goto(invitation);
      await adaPage.waitForURL(`${url}/dashboard`);
      assert.match((await adaPage.textContent('.who'))!, /Workspace team-b/);
      assert.match((await adaPage.textContent('main'))!, /No app is deployed in team-b/, 'the board app of default is not there');
      await adaPage.goto(`${url}/dashboard/apps/board`);
      assert.equal(await adaPage.textContent('h1'), 'Not found');
      const csrf = await adaPage.getAttribute('input[name="_csrf"]', 'value');
      await adaPage.goto(`${url}/dashboard/apps/board/workloads/say/logs/events?csrf=${encodeURIComponent(csrf!)}`);
      assert.match((await adaPage.textContent('body'))!, /not_found/, 'nor its logs');
      await adaPage.goto(`${url}/dashboard/apps/ledger/calls`);
      assert.equal(await adaPage.textContent('h1'), 'Not found', 'nor the calls of ledger');
      await adaPage.goto(`${url}/dashboard/apps/ledger/maps?csrf=${encodeURIComponent(csrf!)}`);
      assert.match((await adaPage.textContent('body'))!, /not_found/, 'nor its maps');
      await adaPage.goto(`${url}/dashboard/settings/tokens`);
      assert.equal(await adaPage.locator('tbody tr').count(), 0, 'no token of default, by name or id');
      await adaPage.goto(`${url}/dashboard/workspace`);
      assert.match((await adaPage.textContent('table'))!, /Ada \(you\).*member/s);
      assert.equal(await adaPage.locator('#invite-name').count(), 0, 'a member invites nobody');
      assert.doesNotMatch((await adaPage.textContent('#yours'))!, /default/, 'default is none of hers');
      await look('workspace-member');

      await page.reload();
      const row = page.locator('tr', { hasText: 'Ada' });
      await row.locator('a', { hasText: 'Remove' }).click();
      await page.click('button:has-text("Remove Ada")');
      await page.waitForURL(/\/dashboard\/workspace\?done=/);
      assert.equal(await page.locator('tr', { hasText: 'Ada' }).count(), 0);
      await adaPage.goto(`${url}/dashboard`);
      assert.equal(new URL(adaPage.url()).pathname, '/login', 'removed: her session ended');
    } finally {
      await ada.close();
    }
    await page.click('button:has-text("Switch to default")');
    await page.waitForURL(/\/dashboard\/workspace\?done=/);
    assert.match((await page.textContent('.who'))!, /Workspace default/);
  });

  it('svc workspace and svc member: create, use, invite a person who signs in there, list, remove; the API refuses what is not theirs', async () => {
    const svc = async (...args: string[]) => (await run(process.execPath, [cli, ...args], { env })).stdout;
    assert.equal((await svc('workspace', 'create', 'team-c')).trim(), 'team-c');
    assert.match(await svc('workspace', 'use', 'team-c'), /svc acts in workspace team-c now/);
    assert.match(await svc('whoami'), /workspace: +team-c/);
    const link = (await svc('member', 'invite', 'Grace', '--role', 'member')).trim();
    assert.match(link, new RegExp(`^${url}/login#[A-Za-z0-9_-]{43}$`));
    const grace = await browser.newContext();
    try {
      const gracePage = await grace.newPage();
      await gracePage.goto(link);
      await gracePage.waitForURL(`${url}/dashboard`);
      assert.match((await gracePage.textContent('.who'))!, /Workspace team-c/);
    } finally {
      await grace.close();
    }
    const listed = JSON.parse(await svc('member', 'list', '--json')) as {
      members: { id: string; name: string; role: string; joined: boolean }[];
    };
    const graceRow = listed.members.find((m) => m.name === 'Grace')!;
    assert.deepEqual([graceRow.role, graceRow.joined], ['member', true]);
    const workspaces = JSON.parse(await svc('workspace', 'list', '--json')) as { current: string; workspaces: { name: string }[] };
    assert.equal(workspaces.current, 'team-c');
    assert.deepEqual(workspaces.workspaces.map((w) => w.name).sort(), ['default', 'team-b', 'team-c']);
    // A token of team-c sees nothing of default's: its app is not found.
    const credentials = JSON.parse(await svc('whoami', '--json')) as { tokenId: string };
    assert.ok(credentials.tokenId);
    const teamToken = JSON.parse(
      await (await import('node:fs/promises')).readFile(path.join(env.SVC_CONFIG_DIR!, 'credentials.json'), 'utf8'),
    ).token as string;
    const other = await fetch(`${url}/api/v1/apps/board`, { headers: { Authorization: `Bearer ${teamToken}` } });
    assert.equal(other.status, 404);
    const sameAccount = await fetch(`${url}/api/v1/workspaces/default/token`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${teamToken}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    assert.equal(sameAccount.status, 201, 'the owner may use default: the same account');
    const noSuch = await fetch(`${url}/api/v1/workspaces/nobodys/token`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${teamToken}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    assert.equal(noSuch.status, 404);
    assert.match(
      (await run(process.execPath, [cli, 'member', 'remove', graceRow.id], { env })).stderr,
      /removed acc_\w+: signed out of this workspace/,
    );
    assert.ok(!(await svc('member', 'list')).includes('Grace'));
    assert.match(await svc('workspace', 'use', 'default'), /workspace default now/);
  });

  it("svc dashboard prints a fresh sign-in link for the CLI's account, which signs a new browser in once", async () => {
    const { stdout } = await run(process.execPath, [cli, 'dashboard', '--no-browser'], { env });
    const link = stdout.trim();
    assert.match(link, new RegExp(`^${url}/login#[A-Za-z0-9_-]{43}$`));
    const fresh = await browser.newContext();
    try {
      const other = await fresh.newPage();
      await other.goto(link);
      await other.waitForURL(`${url}/dashboard`);
      assert.match((await other.textContent('.who'))!, /owner/);
      await other.goto(link);
      assert.equal(new URL(other.url()).pathname, '/dashboard', 'already signed in: the used link is not needed');
    } finally {
      await fresh.close();
    }
  });

  it('signs out: the session ends on the server, so its cookie no longer signs anyone in', async () => {
    const [before] = (await context.cookies()).filter((c) => c.name === 'svc_session');
    await page.goto(`${url}/dashboard`);
    await page.click('button:has-text("Sign out")');
    await page.waitForURL(`${url}/login?signed_out=1`);
    assert.match((await page.textContent('[role="status"]'))!, /signed out/);
    const replay = await browser.newContext();
    try {
      await replay.addCookies([{ ...before!, sameSite: 'Lax' }]);
      const other = await replay.newPage();
      await other.goto(`${url}/dashboard`);
      assert.equal(new URL(other.url()).pathname, '/login', 'the copied cookie is worth nothing');
    } finally {
      await replay.close();
    }
  });
});
