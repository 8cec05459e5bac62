/**
 * Autoscaling through the real gateway, with real Python containers: scale
 * to and from zero, scale up under load, the exact 429 while containers
 * start, draining on redeploy and removal, crash replacement, crash loops,
 * and a third-party scaling policy.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { UnitScalingStatus } from '../../core/services/autoscale/types.js';
import { backoffMs } from '../../core/services/autoscale/crash-tracker.js';
import type { Deployment } from '../../core/services/deployments/types.js';
import { SvcError } from '../../core/model/errors.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import type { PlatformEvent } from '../../core/infra/plugin/types.js';
import { testConfig } from '../helpers/config.js';
import { waitNoneMatching } from '../helpers/processes.js';
import { recordDir } from '../core/infra/scheduler/fixture-units.js';
import { until } from '../helpers/until.js';
import { localDriverOf } from '../helpers/local-driver.js';

const fixture = (name: string) => path.join(packageRoot, 'test', 'fixtures', 'apps', name);
const policyPlugin = path.join(packageRoot, 'test', 'fixtures', 'plugins', 'scaling-policy.mjs');
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Short timings, so that keep_warm=1 and the back-off play out in seconds. */
const autoscale = { tickMs: 100, crash: { backoffBaseMs: 100, stableMs: 2_000 }, drainTimeoutMs: 20_000 };

async function deployFixture(platform: Platform, file: string): Promise<Deployment> {
  const manifest = await loadManifest({ target: fixture(file) });
  return platform.deployments.deploy({
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage: 'deployed',
    principal: null,
  });
}

interface Answer {
  readonly status: number;
  readonly code?: string;
  readonly message?: string;
  readonly pid?: number;
  readonly retryAfter: string | null;
  readonly text: string;
}

async function get(url: string): Promise<Answer> {
  const response = await fetch(url);
  const text = await response.text();
  const body = JSON.parse(text) as { pid?: number; error?: { code: string; message: string } };
  return {
    status: response.status,
    code: body.error?.code,
    message: body.error?.message,
    pid: body.pid,
    retryAfter: response.headers.get('retry-after'),
    text,
  };
}

/** Lookups by workload name in the current platform and deployment. */
function helpers(platform: () => Platform, deployment: () => Deployment) {
  const unit = (name: string) => deployment().units.find((key) => key.endsWith(`/${name}`))!;
  const url = (name: string, query = '') => `${deployment().workloads.find((w) => w.name === name)!.url!}${query}`;
  const status = (name: string): UnitScalingStatus => platform().autoscaler.status(unit(name))!;
  const healthy = (name: string) =>
    platform()
      .driver.status(unit(name))
      .filter((c) => c.state === 'healthy');
  return { unit, url, status, healthy };
}

describe('autoscaling through the gateway (real containers)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let deployment: Deployment;
  let socketDir: string;
  const { unit, url, status, healthy } = helpers(
    () => platform,
    () => deployment,
  );

  before(async () => {
    recordDir(); // crashy.py keeps its marker there; containers inherit the variable
    platform = await startPlatform({ config: testConfig(), autoscale });
    socketDir = localDriverOf(platform).socketDir;
    deployment = await deployFixture(platform, 'scaling.py');
  });
  after(async () => {
    await platform?.close();
    assert.deepEqual(await waitNoneMatching(socketDir, 5_000), [], 'no container outlives the platform');
  });

  it('scales to zero after keep_warm, then starts a container for the next request, which gets 200', async () => {
    await until('elastic scaled to zero', () => status('elastic').containers.length === 0, 15_000);
    assert.equal(status('elastic').state, 'idle');
    assert.equal(healthy('steady').length, 1, 'min_containers=1 keeps one');
    const answer = await get(url('elastic'));
    assert.equal(answer.status, 200, answer.text);
    assert.equal(healthy('elastic').length, 1);
  });

  it('starts one container per tasks_per_container requests at once, up to max_containers', async () => {
    let most = 0;
    let done = false;
    const watching = (async () => {
      while (!done) {
        most = Math.max(most, platform.driver.status(unit('elastic')).filter((c) => c.state !== 'stopping').length);
        await wait(20);
      }
    })();
    const answers = await Promise.all([1, 2, 3].map(() => get(url('elastic', '?seconds=2'))));
    done = true;
    await watching;
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200],
    );
    assert.equal(most, 3, 'three requests, tasks_per_container 1, max_containers 3');
    const more = await Promise.all([1, 2, 3, 4].map(() => get(url('elastic', '?seconds=0.5'))));
    assert.deepEqual(
      more.map((a) => a.status),
      [200, 200, 200, 200],
    );
    assert.ok(platform.driver.status(unit('elastic')).length <= 3, 'never above max_containers');
  });

  it('admits exactly max_pending_tasks of a burst against a workload at zero; the rest get 429', async () => {
    await until('elastic scaled to zero', () => status('elastic').containers.length === 0, 15_000);
    // The real driver starts the container only once the burst has been answered or queued: a container forked
    // from the zygote can be healthy within the burst on a busy machine, and a request after that finds it.
    const driver = platform.driver;
    const scale = driver.scale.bind(driver);
    let release = () => {};
    const burstSettled = new Promise<void>((resolve) => (release = resolve));
    driver.scale = async (key, count) => {
      await burstSettled;
      return scale(key, count);
    };
    let answered = 0;
    const pending = Array.from({ length: 10 }, () => get(url('elastic', '?seconds=0.2')).finally(() => (answered += 1)));
    try {
      await until('the 7 requests past max_pending_tasks are answered', () => answered >= 7, 15_000);
      assert.equal(answered, 7, 'only the refused requests are answered before a container starts');
    } finally {
      release();
      driver.scale = scale;
    }
    const answers = await Promise.all(pending);
    const counts = new Map<number, number>();
    for (const answer of answers) counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(counts), { 200: 3, 429: 7 }, 'max_pending_tasks=3; starting containers are not capacity yet');
    for (const refused of answers.filter((a) => a.status === 429)) {
      assert.equal(refused.code, 'queue_full');
      assert.equal(refused.retryAfter, '1');
    }
  });

  it('replaces a container that was killed, and requests succeed again', async () => {
    const [victim] = healthy('steady');
    assert.ok(victim?.pid);
    process.kill(victim.pid, 'SIGKILL');
    await until('a replacement is healthy', () => healthy('steady').some((c) => c.id !== victim.id), 20_000);
    const replaced = status('steady');
    assert.equal(replaced.failures, 1);
    assert.match(replaced.lastExit?.reason ?? '', new RegExp(`container ${victim.id} exited unexpectedly with signal SIGKILL`));
    const answer = await get(url('steady'));
    assert.equal(answer.status, 200, answer.text);
  });

  it('lets a request in flight finish when the deployment is replaced, and when it is removed', async () => {
    for (const change of ['redeploy', 'remove'] as const) {
      const slow = get(url('steady', '?seconds=2'));
      await until('the slow request is in flight', () => status('steady').inFlight === 1, 10_000);
      const [serving] = healthy('steady');
      const order: string[] = [];
      const changing = (
        change === 'redeploy'
          ? deployFixture(platform, 'scaling.py').then((d) => (deployment = d))
          : platform.deployments.remove(deployment.ref)
      ).then(() => order.push(change));
      const answered = slow.then((answer) => (order.push('answered'), answer));
      await wait(300);
      assert.equal(
        platform.driver.status(serving!.unit).find((c) => c.id === serving!.id)?.state,
        'healthy',
        `${change}: the container is not stopped under its request`,
      );
      const answer = await answered;
      await changing;
      assert.equal(answer.status, 200, `${change}: ${answer.text}`);
      assert.deepEqual(order, ['answered', change]);
    }
    deployment = await deployFixture(platform, 'scaling.py');
  });

  it('marks a workload whose containers keep exiting as crash-looping: 503 crash_loop without log lines, back-off growing', async () => {
    const crashy = await deployFixture(platform, 'crashy.py');
    const key = crashy.units[0]!;
    const crashyUrl = crashy.workloads[0]!.url!;
    const [first] = platform.driver.status(key);
    const killedAt = Date.now();
    process.kill(first!.pid!, 'SIGKILL'); // every container after the first exits at import
    await until('the killed container is out of service', () => platform.registry.instances(key).length === 0, 10_000);

    const queued = await get(crashyUrl);
    assert.equal(queued.status, 503, queued.text);
    assert.equal(queued.code, 'crash_loop');
    assert.match(queued.message ?? '', /exited 3 times in a row; last: container c-\w+ of crashy exited with code 3/);
    assert.doesNotMatch(queued.text, /secret-looking/, 'log lines stay out of HTTP answers');
    assert.ok(Number(queued.retryAfter) >= 1);

    const next = await get(crashyUrl);
    assert.equal(next.code, 'crash_loop', 'refused at once while no container serves');

    // Requests keep coming: the back-off retries go on, each waiting longer.
    while (platform.autoscaler.status(key)!.failures < 5) {
      assert.equal((await get(crashyUrl)).code, 'crash_loop');
      await wait(100);
    }
    const crashStatus = platform.autoscaler.status(key)!;
    assert.equal(crashStatus.state, 'crash_loop');
    assert.ok(crashStatus.backoffMs >= 1_600);
    assert.ok(
      crashStatus.recentLogs.some((line) => line.text.includes('secret-looking')),
      'the logs are in the status',
    );
    const starts = crashStatus.recentLogs
      .filter((line) => line.time.getTime() >= killedAt && /^starting container c-\w+ for crashy/.test(line.text))
      .map((line) => line.time.getTime());
    assert.ok(starts.length >= 4, `four starts after the kill: ${starts.length}`);
    // After the k-th failed start since the kill, failures = k + 1: the next start waits at least that back-off.
    for (let k = 1; k < starts.length; k++) {
      assert.ok(
        starts[k]! - starts[k - 1]! >= backoffMs(k + 1, { backoffBaseMs: 100, backoffCapMs: 30_000 }),
        `start ${k + 1} waited its back-off`,
      );
    }
    await platform.deployments.remove(crashy.ref);
  });
});

describe('a scaling policy from a third-party plugin', function () {
  this.timeout(120_000);
  let platform: Platform | undefined;
  after(async () => platform?.close());

  it('is used when the config names it, and the plugin sees the container events', async () => {
    const { events } = (await import(pathToFileURL(policyPlugin).href)) as { events: PlatformEvent[] };
    platform = await startPlatform({ config: testConfig({ plugins: [policyPlugin], scalingPolicy: 'fixed-two' }), autoscale });
    const deployment = await deployFixture(platform, 'scaling.py');
    const { status, healthy, unit } = helpers(
      () => platform!,
      () => deployment,
    );
    assert.equal(status('elastic').policy, 'fixed-two');
    await until('fixed-two started a second container without any request', () => healthy('elastic').length === 2, 20_000);
    await wait(300);
    assert.equal(platform.driver.status(unit('steady')).length, 1, 'clamped to max_containers=1');
    const started = events.filter((e) => e.type === 'container.started' && e.workload === 'elastic');
    await until(
      'both starts announced',
      () => events.filter((e) => e.type === 'container.started' && e.workload === 'elastic').length === 2,
      5_000,
    );
    assert.ok(started.every((e) => e.type === 'container.started' && e.app === 'scaling' && e.workspace === DEFAULT_WORKSPACE));
  });

  it('refuses to start with config_invalid when the config names an unknown policy', async () => {
    await assert.rejects(startPlatform({ config: testConfig({ scalingPolicy: 'queue-deepth' }) }), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'config_invalid');
      assert.equal(error.message, 'scalingPolicy "queue-deepth" is not a known scaling policy; known: queue-depth.');
      return true;
    });
  });
});
