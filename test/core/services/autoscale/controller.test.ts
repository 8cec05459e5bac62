/**
 * The autoscaler with the real pieces around it: the embedded registry, the
 * gateway's Admission and the local driver running Python containers.
 * Requests are admission slots here; HTTP through the gateway is in
 * test/e2e/autoscale.test.ts.
 */
import assert from 'node:assert/strict';
import { Autoscaler, type AutoscalerOptions } from '../../../../core/services/autoscale/controller.js';
import { LoadReporter } from '../../../../core/traffic/cluster/load-report.js';
import { PeerLoad } from '../../../../core/traffic/cluster/peer-load.js';
import { Admission, type Slot } from '../../../../core/traffic/gateway/admission.js';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import { RecentLogs } from '../../../../core/infra/logs/recent-logs.js';
import type { PlatformEvent, ScalingPolicy } from '../../../../core/infra/plugin/types.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import { createLocalDriver, type LocalDriver } from '../../../../core/infra/scheduler/local/driver.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import type { DeploymentUnit } from '../../../../core/infra/scheduler/types.js';
import type { ScalingSpec } from '../../../../core/model/workload/types.js';
import { queueDepth } from '../../../../plugins/autoscale-queue-depth/index.js';
import { waitNoneMatching } from '../../../helpers/processes.js';
import { fixtureUnit, recordDir, runtimeImage } from '../../infra/scheduler/fixture-units.js';
import { until } from '../../../helpers/until.js';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Autoscaler (real containers)', function () {
  this.timeout(60_000);
  let image: BuiltImage;
  let cleanup: (() => Promise<void>) | undefined;

  before(async () => {
    image = await runtimeImage();
    recordDir();
  });
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  function setup(scaling: Partial<ScalingSpec>, policy: ScalingPolicy = queueDepth, options: Partial<AutoscalerOptions> = {}) {
    const registry = createEmbeddedRegistry();
    const admission = new Admission(registry, { waitTimeoutMs: 30_000 });
    const logs = new RecentLogs();
    const events: PlatformEvent[] = [];
    const reports: unknown[] = [];
    const driver: LocalDriver = createLocalDriver({
      registry,
      logs: logs.sink(),
      onContainerExit: (unit, id, reason) => autoscaler.containerExited(unit.key, id, reason),
    });
    const autoscaler = new Autoscaler({
      driver,
      admission,
      policy: { name: 'under-test', plugin: 'test:policy', decide: policy },
      fallback: queueDepth,
      logs,
      log: logs.sink(),
      emit: (event) => events.push(event),
      report: (error) => reports.push(error),
      tickMs: 100,
      ...options,
    });
    const unit: DeploymentUnit = fixtureUnit(image, 'workers', 'parallel', { keepWarmSeconds: 1, ...scaling });
    cleanup = async () => {
      autoscaler.close();
      admission.close();
      await driver.close();
      assert.deepEqual(await waitNoneMatching(driver.socketDir, 5_000), [], 'no container outlives the driver');
    };
    const healthy = () => driver.status(unit.key).filter((c) => c.state === 'healthy');
    const enter = () => admission.enter(unit.key, { maxPending: unit.workload.scaling.maxPendingTasks }, new AbortController().signal);
    return { registry, admission, driver, autoscaler, unit, events, reports, healthy, enter };
  }

  /**
   * Two svc replicas sharing a state store and the registry: the leader's
   * autoscaler (`setup`) reads the follower's load through PeerLoad; the
   * follower's own autoscaler supervises its admission but does not lead.
   */
  async function withFollower(scaling: Partial<ScalingSpec>, policy: ScalingPolicy) {
    const store = createMemoryStateStore();
    const peerReports: unknown[] = [];
    let leader: Autoscaler | undefined;
    const peers = new PeerLoad({
      store,
      self: 'leader',
      report: (error) => peerReports.push(error),
      onChange: (units) => leader?.evaluate(units),
    });
    await peers.start();
    const t = setup(scaling, policy, { peers });
    leader = t.autoscaler;
    const admission = new Admission(t.registry, { waitTimeoutMs: 30_000 });
    const follower = new Autoscaler({
      driver: t.driver,
      admission,
      policy: { name: 'under-test', plugin: 'test:policy', decide: policy },
      fallback: queueDepth,
      leads: () => false,
    });
    const reporter = new LoadReporter({
      store,
      replicaId: 'follower',
      admission,
      registry: t.registry,
      units: () => [t.unit.key],
      intervalMs: 100,
      report: (error) => peerReports.push(error),
    });
    const leaderCleanup = cleanup!;
    cleanup = async () => {
      await reporter.close();
      await peers.close();
      follower.close();
      admission.close();
      await store.close();
      await leaderCleanup();
      assert.deepEqual(peerReports, []);
    };
    const enter = () => {
      const entering = admission.enter(t.unit.key, { maxPending: t.unit.workload.scaling.maxPendingTasks }, new AbortController().signal);
      reporter.notice(t.unit.key); // what the platform does when a request queues
      return entering;
    };
    return { ...t, follower: { admission, autoscaler: follower, enter } };
  }

  it('starts a container for a request to a unit at zero, and hands the request a slot on it', async () => {
    const t = setup({ autoscaler: { minContainers: 0, maxContainers: 2, tasksPerContainer: 1 } });
    await t.driver.submit(t.unit);
    t.autoscaler.manage(t.unit);
    assert.equal(t.autoscaler.status(t.unit.key)?.state, 'idle');
    const entering = t.enter();
    assert.deepEqual(t.admission.load(t.unit.key), { inFlight: 0, queued: 1 }, 'the request waits, counted as queued');
    await until('a container is starting', () => t.autoscaler.status(t.unit.key)?.state === 'starting', 5_000);
    const slot = await entering;
    assert.equal(slot.instance.meta.container, t.healthy()[0]?.id);
    assert.equal(t.driver.status(t.unit.key).length, 1, 'one request, tasks_per_container 1: one container');
    await until('the start was announced', () => t.events.length > 0, 5_000);
    assert.deepEqual(t.events, [
      { type: 'container.started', workspace: 'default', app: 'workers', workload: 'parallel', containerId: t.healthy()[0]!.id },
    ]);
    slot.release();
  });

  it('stops the least recently used idle container first after keep_warm, and never one with a request in flight', async () => {
    let want = 2;
    const t = setup({ autoscaler: { minContainers: 0, maxContainers: 2, tasksPerContainer: 1 } }, () => want);
    await t.driver.submit(t.unit);
    t.autoscaler.manage(t.unit);
    await until('two containers serve', () => t.healthy().length === 2 && t.registry.instances(t.unit.key).length === 2, 20_000);
    const both = t.healthy().map((c) => c.id);
    // A use in the same millisecond as the later container became healthy would tie, and ties go by id.
    await wait(5);

    // Use one container: the other becomes the least recently used.
    let slot: Slot = await t.enter();
    const used = slot.instance.meta.container!;
    slot.release();
    want = 1;
    await until('one container was stopped', () => t.healthy().length === 1, 10_000);
    assert.equal(t.healthy()[0]!.id, used, 'the least recently used one went');
    const stopped = () => t.events.flatMap((e) => (e.type === 'container.stopped' ? [e.containerId] : []));
    await until('the stop was announced', () => stopped().length === 1, 10_000);
    assert.deepEqual(
      stopped(),
      both.filter((id) => id !== used),
    );

    // A request in flight for longer than keep_warm keeps its container.
    slot = await t.enter();
    want = 0;
    await wait(1_800); // keep_warm (1 s) and several ticks
    assert.deepEqual(
      t.healthy().map((c) => c.id),
      [used],
      'not stopped under a request',
    );
    slot.release();
    await until('scaled to zero once idle for keep_warm', () => t.driver.status(t.unit.key).length === 0, 10_000);
    assert.equal(t.autoscaler.status(t.unit.key)?.state, 'idle');
  });

  it('with keep_warm 0 stops a container as soon as it is idle', async () => {
    const t = setup({ keepWarmSeconds: 0, autoscaler: { minContainers: 0, maxContainers: 1, tasksPerContainer: 1 } });
    await t.driver.submit(t.unit);
    t.autoscaler.manage(t.unit);
    const slot = await t.enter();
    assert.equal(t.healthy().length, 1);
    slot.release();
    await until('stopped after the next tick', () => t.driver.status(t.unit.key).length === 0, 5_000);
  });

  it('reports a failing policy once per unit and lets queue-depth decide', async () => {
    const t = setup({ autoscaler: { minContainers: 0, maxContainers: 1, tasksPerContainer: 1 } }, () => {
      throw new Error('policy bug');
    });
    await t.driver.submit(t.unit);
    t.autoscaler.manage(t.unit);
    const slot = await t.enter();
    await wait(300); // a few more ticks
    assert.equal(t.reports.length, 1, 'reported once');
    assert.match((t.reports[0] as Error).message, /scaling policy "under-test" of plugin "test:policy" threw: policy bug/);
    slot.release();
  });

  it('starts a container for a request queued on another replica, whatever the policy says', async () => {
    const t = await withFollower({ autoscaler: { minContainers: 0, maxContainers: 2, tasksPerContainer: 1 } }, () => 0);
    await t.driver.submit(t.unit);
    t.autoscaler.manage(t.unit);
    t.follower.autoscaler.manage(t.unit);
    const slot = await t.follower.enter();
    assert.equal(slot.instance.meta.container, t.healthy()[0]?.id, 'the leader started it; the follower got a slot on it');
    assert.deepEqual(t.admission.load(t.unit.key), { inFlight: 0, queued: 0 }, 'nothing waited on the leader');
    await until('the leader counts the request in flight on the follower', () => t.autoscaler.status(t.unit.key)?.inFlight === 1, 5_000);
    assert.equal(t.autoscaler.status(t.unit.key)?.containers[0]?.inFlight, 1);
    slot.release();
  });

  it('keeps a container warm that another replica uses or used within keep_warm', async () => {
    let want = 1;
    const t = await withFollower({ autoscaler: { minContainers: 0, maxContainers: 1, tasksPerContainer: 1 } }, () => want);
    await t.driver.submit(t.unit);
    t.autoscaler.manage(t.unit);
    t.follower.autoscaler.manage(t.unit);
    await until('a container serves', () => t.healthy().length === 1 && t.registry.instances(t.unit.key).length === 1, 20_000);
    const [container] = t.healthy();

    const slot = await t.follower.enter();
    await until(
      'the leader sees the request in flight on the follower',
      () => t.autoscaler.status(t.unit.key)?.containers[0]?.inFlight === 1,
      5_000,
    );
    want = 0;
    await wait(1_800); // keep_warm (1 s) and several ticks
    assert.deepEqual(
      t.healthy().map((c) => c.id),
      [container!.id],
      'not stopped under a request on another replica',
    );

    slot.release();
    const releasedAt = Date.now();
    await until('the leader sees the request finish', () => t.autoscaler.status(t.unit.key)?.containers[0]?.inFlight === 0, 5_000);
    assert.ok(
      t.autoscaler.status(t.unit.key)!.containers[0]!.lastActiveAt!.getTime() >= releasedAt - 200,
      "its last use is the follower's",
    );
    await wait(Math.max(0, releasedAt + 500 - Date.now()));
    assert.equal(t.healthy().length, 1, 'used on another replica within keep_warm: still warm');
    await until('stopped once idle for keep_warm everywhere', () => t.driver.status(t.unit.key).length === 0, 10_000);
    assert.ok(Date.now() - releasedAt >= 900, 'not before keep_warm');
  });

  it('replaces a container that exits while min_containers needs it, announcing container.failed', async () => {
    const t = setup({ autoscaler: { minContainers: 1, maxContainers: 1, tasksPerContainer: 1 } }, queueDepth, {
      crash: { backoffBaseMs: 50 },
    });
    await t.driver.submit(t.unit);
    await t.driver.scale(t.unit.key, 1); // what the deploy does before it hands the unit over
    t.autoscaler.manage(t.unit);
    const [victim] = t.healthy();
    process.kill(victim!.pid!, 'SIGKILL');
    await until('a replacement is healthy', () => t.healthy().some((c) => c.id !== victim!.id), 20_000);
    const failed = t.events.find((e) => e.type === 'container.failed');
    assert.deepEqual(failed, {
      type: 'container.failed',
      workspace: 'default',
      app: 'workers',
      workload: 'parallel',
      containerId: victim!.id,
      reason: 'exited unexpectedly with signal SIGKILL',
    });
    assert.equal(t.autoscaler.status(t.unit.key)?.state, 'ready');
    assert.equal(t.autoscaler.status(t.unit.key)?.failures, 1, 'one failure, cleared only once the replacement stays healthy');
  });
});
