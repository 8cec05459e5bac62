/**
 * `/metrics`: a real deployment's requests show up in Prometheus' text, on
 * the token-free metrics listener and, for the operator only, on svc's own
 * port; and a real Prometheus (Debian's) scrapes both and answers queries
 * over what it stored.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { examplesRoot, packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { tokenFor } from '../core/http/api/platform.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { requirePrometheus, startPrometheus, type Prometheus } from '../helpers/prometheus.js';
import { sample } from '../helpers/metrics-text.js';
import { until } from '../helpers/until.js';

const HELLO = 'workspace="default",app="quickstart",workload="hello",stage="deployed"';
const GREET = 'workspace="default",app="quickstart",workload="greet",stage="deployed"';
const ELASTIC = 'workspace="default",app="scaling",workload="elastic",stage="deployed"';

describe('metrics: /metrics in Prometheus text, scraped by a real Prometheus', function () {
  this.timeout(180_000);
  let platform: Platform;
  let prometheus: Prometheus | undefined;

  before(async () => {
    platform = await startPlatform({ config: testConfig({ metricsAddress: '127.0.0.1:0' }), report: () => {} });
    for (const target of [
      path.join(examplesRoot, 'quickstart', 'app.py'),
      path.join(packageRoot, 'test', 'fixtures', 'apps', 'scaling.py'),
    ]) {
      const manifest = await loadManifest({ target });
      await platform.deployments.deploy({
        spec: manifest.spec,
        source: { root: manifest.root, entry: manifest.spec.entry },
        workspace: DEFAULT_WORKSPACE,
        stage: 'deployed',
        principal: null,
      });
    }
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${platform.url}/default/quickstart/hello/hello?name=ada`)).status, 200);
    // Without a token: the gateway answers 401 itself.
    assert.equal((await fetch(`${platform.url}/default/quickstart/greet/greet`, { method: 'POST', body: '{"name":"x"}' })).status, 401);
  });
  after(async () => {
    await prometheus?.stop();
    await platform?.close();
  });

  it('counts the requests by status, times them at the gateway and upstream, and counts the errors by code', async () => {
    const text = await (await fetch(platform.metricsUrl!)).text();
    assert.equal(sample(text, 'svc_requests_total', `${HELLO},status="200"`), 3);
    assert.equal(sample(text, 'svc_request_duration_seconds_count', HELLO), 3);
    assert.equal(sample(text, 'svc_upstream_duration_seconds_count', HELLO), 3);
    assert.equal(sample(text, 'svc_requests_total', `${GREET},status="401"`), 1);
    assert.equal(sample(text, 'svc_gateway_errors_total', `${GREET},code="unauthorized"`), 1);
    // The 401 never reached a container.
    assert.equal(sample(text, 'svc_upstream_duration_seconds_count', GREET) ?? 0, 0);
  });

  it('shows containers by state, load now, cold starts, scale events, the state store and the event loop', async () => {
    const scrape = async () => (await fetch(platform.metricsUrl!)).text();
    // elastic keeps no container warm (min_containers=0, keep_warm=1): once its deploy's container is gone, a request starts one cold.
    await until(
      'elastic has no container',
      async () => !/^svc_containers\{[^}]*workload="elastic"[^}]*\} [1-9]/m.test(await scrape()),
      30_000,
    );
    assert.equal((await fetch(`${platform.url}/default/scaling/elastic`)).status, 200);
    // A scrape within 100 ms of the last reads the same readings, and a cold start from a zygote can be quicker than that.
    const text = await until(
      'the new container shows',
      async () => {
        const scraped = await scrape();
        return sample(scraped, 'svc_containers', `${ELASTIC},state="healthy"`) === 1 && scraped;
      },
      5_000,
    );
    assert.equal(sample(text, 'svc_containers', `${HELLO},state="healthy"`), 1);
    assert.equal(sample(text, 'svc_requests_in_flight', HELLO), 0);
    assert.equal(sample(text, 'svc_requests_queued', HELLO), 0);
    assert.equal(sample(text, 'svc_cold_start_duration_seconds_count', ELASTIC), 1);
    assert.ok((sample(text, 'svc_cold_start_duration_seconds_sum', ELASTIC) ?? 0) > 0, text);
    assert.equal(sample(text, 'svc_scale_events_total', `${ELASTIC},direction="up"`), 1);
    assert.equal(sample(text, 'svc_scale_events_total', `${ELASTIC},direction="down"`), 1);
    assert.ok((sample(text, 'svc_state_store_duration_seconds_count', 'operation="put",outcome="ok"') ?? 0) > 0, text);
    assert.match(text, /^svc_process_nodejs_eventloop_lag_seconds \d/m);
  });

  it('counts each 429 with its cause, and shows requests in flight and queued while they wait', async () => {
    // At most 3 containers of 1 slot and 3 places in the queue: of 9 requests at once, 3 or more (while containers start) get queue_full.
    const answers = Promise.all(
      Array.from({ length: 9 }, () => fetch(`${platform.url}/default/scaling/elastic?seconds=3`).then((r) => r.status)),
    );
    const busy = await until(
      'requests in flight and queued',
      async () => {
        const text = await (await fetch(platform.metricsUrl!)).text();
        return (sample(text, 'svc_requests_queued', ELASTIC) ?? 0) > 0 ? text : null;
      },
      30_000,
    );
    assert.ok((sample(busy, 'svc_requests_in_flight', ELASTIC) ?? 0) + (sample(busy, 'svc_requests_queued', ELASTIC) ?? 0) <= 6, busy);
    const statuses = await answers;
    const refused = statuses.filter((status) => status === 429).length;
    assert.ok(refused >= 3 && statuses.every((status) => status === 200 || status === 429), String(statuses));
    const text = await (await fetch(platform.metricsUrl!)).text();
    assert.equal(sample(text, 'svc_requests_total', `${ELASTIC},status="429"`), refused);
    assert.equal(sample(text, 'svc_gateway_errors_total', `${ELASTIC},code="queue_full"`), refused);
  });

  it("on svc's own port, answers the operator's token only", async () => {
    const url = `${platform.url}/metrics`;
    const anonymous = await fetch(url);
    assert.equal(anonymous.status, 401);
    const member = await tokenFor(platform, DEFAULT_WORKSPACE);
    const refused = await fetch(url, { headers: { authorization: `Bearer ${member.secret}` } });
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'not_operator');
    const operator = await fetch(url, { headers: { authorization: `Bearer ${platform.ownerToken.secret}` } });
    assert.equal(operator.status, 200);
    assert.match(operator.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.equal(sample(await operator.text(), 'svc_requests_total', `${HELLO},status="200"`), 3);
  });

  it("is scraped by a real Prometheus on both addresses, which then answers a query over svc's series", async function () {
    requirePrometheus(this);
    const tokenFile = path.join(tempDir('svc-prom-token-'), 'token');
    writeFileSync(tokenFile, platform.ownerToken.secret);
    prometheus = await startPrometheus([
      { name: 'svc-listener', target: new URL(platform.metricsUrl!).host, path: '/metrics' },
      { name: 'svc-port', target: new URL(platform.url).host, path: '/metrics', tokenFile },
    ]);
    const up = await until(
      'both targets are up',
      async () => {
        const result = await prometheus!.query('up');
        return result.length === 2 && result.every((r) => r.value[1] === '1') ? result : null;
      },
      30_000,
    );
    assert.deepEqual(up.map((r) => r.metric.job).sort(), ['svc-listener', 'svc-port']);
    const requests = await prometheus.query('sum by (status) (svc_requests_total{job="svc-listener",workload="hello"})');
    assert.deepEqual(
      requests.map((r) => [r.metric.status, r.value[1]]),
      [['200', '3']],
    );
  });

  it('has a Grafana dashboard whose every query Prometheus takes, over series svc serves', async function () {
    requirePrometheus(this);
    assert.ok(prometheus, 'the scrape test started Prometheus');
    const dashboard = JSON.parse(readFileSync(path.join(packageRoot, 'docs', 'grafana', 'svc-dashboard.json'), 'utf8')) as {
      panels: { targets: { expr: string }[] }[];
    };
    const served = new Set(
      [...(await (await fetch(platform.metricsUrl!)).text()).matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, name, type]) =>
        type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!],
      ),
    );
    const expressions = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
    assert.ok(expressions.length >= 9);
    for (const expression of expressions) {
      for (const [name] of expression.matchAll(/\bsvc_\w+/g))
        assert.ok(served.has(name), `${name} (in ${expression}) is not a series svc serves`);
      // Grafana's variables, as Grafana would fill them in.
      await prometheus!.query(expression.replaceAll('$__rate_interval', '1m').replaceAll('$workspace', '.*').replaceAll('$app', '.*'));
    }
  });
});
