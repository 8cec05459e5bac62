/**
 * The charts of the last hour in a real Chromium, under the dashboard's own
 * Content-Security-Policy: real requests (answers, 404s, 500s) to a real
 * Python container show on the workload's page, which refreshes them, and
 * the Usage page draws its days. Screenshots go to .cache/test-output/dashboard/
 * (docs/images/dashboard/ keeps copies).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { seriousViolations } from '../browser/axe.js';
import { launchChromium, needChromium, screenshotDir } from '../browser/chromium.js';
import { testConfig } from '../helpers/config.js';
import { until } from '../helpers/until.js';
import { deployRequest } from './lifecycle-helpers.js';

/**
 * A series' highest minute of the hour, from a chart's description (`5xx: latest 0.2 req/s, highest 0.5 req/s`
 * → 0.5); not its latest: a minute that began between the requests and the reading has none yet.
 */
function highest(description: string, series: string): number {
  const found = new RegExp(`${series}: latest [^,]*, highest ([\\d.]+)(k|M)? `).exec(description);
  assert.ok(found, `${series} has a highest figure in: ${description}`);
  return Number(found[1]) * (found[2] === 'k' ? 1e3 : found[2] === 'M' ? 1e6 : 1);
}

describe('charts of the last hour in Chromium', function () {
  this.timeout(120_000);
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  /** A page of a context that bypasses the CSP, for axe-core's script alone. */
  let axePage: Page;
  /** The owner's session in default, for requests made outside the browser. */
  let owner: { secret: string; csrf: string };
  const violations: string[] = [];
  const workloadPage = '/dashboard/apps/gauge/workloads/work';

  before(async function () {
    needChromium(this);
    platform = await startPlatform({ config: testConfig() });
    const manifest = await loadManifest({
      target: path.join(packageRoot, 'test', 'fixtures', 'dashboard-charts', 'app.py'),
      python: platform.config.python,
    });
    await platform.deployments.deploy(deployRequest(manifest));
    browser = await launchChromium();
    // The dashboard's own CSP applies (no bypassCSP): a chart that needed an inline style would show here.
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const axeContext = await browser.newContext({ bypassCSP: true });
    const { secret, session } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default');
    owner = { secret, csrf: session.csrf };
    const cookie = { name: 'svc_session', value: secret, url: platform.url, httpOnly: true, sameSite: 'Lax' } as const;
    await context.addCookies([cookie]);
    await axeContext.addCookies([cookie]);
    page = await context.newPage();
    axePage = await axeContext.newPage();
    page.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
    });
  });
  after(async () => {
    await browser?.close();
    await platform?.close();
  });

  /** What each chart of the page says in words (its <desc>), by its id. */
  async function descriptions(): Promise<Record<string, string>> {
    const pairs = await page
      .locator('svg.chart desc')
      .evaluateAll((all) => all.map((desc) => [desc.id.replace(/-desc$/, ''), desc.textContent ?? '']));
    return Object.fromEntries(pairs);
  }

  it("shows a workload's requests by status and its latency, and refreshes them in place", async () => {
    const url = `${platform.url}/default/gauge/work`;
    const statuses: number[] = [];
    for (const target of [...Array(12).fill('/work'), '/nothing-here', '/nothing-here', '/work?fail=1', '/work?fail=1']) {
      const answer = await fetch(`${url}${target}`);
      await answer.arrayBuffer();
      statuses.push(answer.status);
    }
    assert.deepEqual(
      [statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 404).length, statuses.filter((s) => s === 500).length],
      [12, 2, 2],
      `the answers: ${statuses}`,
    );
    // Containers are sampled every second: the charts, as the page's script asks for them, show one running.
    await until(
      'a sample of the containers',
      async () => {
        const charts = await fetch(`${platform.url}${workloadPage}/charts?csrf=${encodeURIComponent(owner.csrf)}`, {
          headers: { Cookie: `svc_session=${owner.secret}` },
        });
        return /running: latest 1 /.test(await charts.text());
      },
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    await page.clock.install();
    await page.goto(`${platform.url}${workloadPage}`);
    const charts = await descriptions();
    assert.deepEqual(Object.keys(charts).sort(), [
      'chart-cold-starts',
      'chart-containers',
      'chart-latency',
      'chart-queue',
      'chart-requests',
    ]);
    for (const series of ['2xx', '4xx', '5xx']) assert.ok(highest(charts['chart-requests']!, series) > 0, `${series} requests/s above 0`);
    assert.equal(highest(charts['chart-requests']!, '3xx'), 0);
    const [p50, p99] = [highest(charts['chart-latency']!, 'p50'), highest(charts['chart-latency']!, 'p99')];
    assert.ok(p50 > 0 && p99 >= p50, `p50 ${p50} ms, p99 ${p99} ms`);
    assert.ok((await page.locator('svg.chart[aria-labelledby^="chart-requests"] .tone-red :is(path, circle)').count()) > 0, '5xx drawn');
    await page.locator('section[aria-labelledby="last-hour"]').screenshot({ path: shot('workload-charts') });

    // The script asks for the charts again every 10 s (the page's clock is playwright's): new ones replace these.
    await page
      .locator('svg.chart')
      .first()
      .evaluate((svg) => svg.setAttribute('data-old', ''));
    for (let i = 0; i < 20; i++) await (await fetch(`${url}/work?fail=1`)).arrayBuffer();
    await page.clock.fastForward(11_000);
    await page.locator('svg.chart[data-old]').waitFor({ state: 'detached', timeout: 10_000 });
    assert.match((await page.textContent('#charts-state'))!, /updated every 10 s/);
    // Rates of the current minute divide by the seconds gone by, so a later reading may show a lower rate
    // for more requests, and a minute that began since the requests has none yet: what the refresh must show
    // is a 5xx rate still there in the hour, in a description that changed.
    const refreshed = await descriptions();
    assert.ok(highest(refreshed['chart-requests']!, '5xx') > 0, '5xx still drawn');
    assert.notEqual(refreshed['chart-requests'], charts['chart-requests'], 'the new charts count the new requests');
    assert.deepEqual(violations, [], 'nothing broke the Content-Security-Policy');
    await axePage.goto(`${platform.url}${workloadPage}`);
    assert.deepEqual(await seriousViolations(axePage), [], 'axe-core on the workload page');
  });

  it('is not found in another workspace, page and charts alike', async () => {
    const created = await fetch(`${platform.url}/api/v1/workspaces`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${platform.ownerToken.secret}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'acme' }),
    });
    assert.equal(created.status, 201, await created.text());
    const { secret, session } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'acme');
    const cookie = `svc_session=${secret}`;
    const shown = await fetch(`${platform.url}${workloadPage}`, { headers: { Cookie: cookie } });
    assert.equal(shown.status, 404);
    assert.doesNotMatch(await shown.text(), /<svg/);
    const charts = await fetch(`${platform.url}${workloadPage}/charts?csrf=${encodeURIComponent(session.csrf)}`, {
      headers: { Cookie: cookie },
    });
    assert.equal(charts.status, 404);
  });

  it("draws the Usage page's CPU and memory per day above its tables", async () => {
    await page.goto(`${platform.url}/dashboard/usage`);
    for (const id of ['chart-cpu', 'chart-memory'])
      assert.equal(await page.locator(`svg.chart[aria-labelledby="${id}-title ${id}-desc"]`).count(), 1, id);
    assert.equal(await page.locator('svg.chart[aria-labelledby^="chart-cpu"] .axis.x text').count(), 7, 'a column a day');
    await page.locator('section[aria-labelledby="usage-chart"]').screenshot({ path: shot('usage-charts') });
    assert.deepEqual(violations, [], 'nothing broke the Content-Security-Policy');
    await axePage.goto(`${platform.url}/dashboard/usage`);
    assert.deepEqual(await seriousViolations(axePage), [], 'axe-core on the Usage page');
  });

  it('fits a phone-width screen: the charts shrink with it, no page scrolls sideways', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    for (const pagePath of ['/dashboard/usage', workloadPage]) {
      await page.goto(`${platform.url}${pagePath}`);
      const width = await page.evaluate(
        () => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth,
      );
      assert.ok(width <= 360, `${pagePath} is ${width} px wide at 360`);
    }
    await page.screenshot({ path: shot('phone-workload-charts'), fullPage: true });
  });
});

function shot(name: string): string {
  mkdirSync(screenshotDir, { recursive: true });
  return path.join(screenshotDir, `${name}.png`);
}
