/**
 * When the gateway learns a deployment's routes: only once its containers
 * are healthy, and never when a URL is taken (then nothing starts at all).
 * Uses stand-in image builder and driver; real containers are in test/e2e.
 */
import assert from 'node:assert/strict';
import { DeploymentManager, type UnitScaler } from '../../../../core/services/deployments/manager.js';
import { SvcError } from '../../../../core/model/errors.js';
import { RouteTable } from '../../../../core/traffic/gateway/route-table.js';
import type { ImageBuilder } from '../../../../core/infra/images/types.js';
import { createPluginHost } from '../../../../core/infra/plugin/host.js';
import { DeploymentRecords } from '../../../../core/services/deployments/records.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import type { SchedulerDriver } from '../../../../core/infra/scheduler/types.js';
import type { AppSpec } from '../../../../core/model/workload/types.js';
import { endpoint, routeEntry } from '../../traffic/gateway/harness.js';

const spec: AppSpec = { name: 'demo', entry: 'app', sdkVersion: '0.1.0', images: [endpoint().image], workloads: [endpoint()] };
const PREFIX = '/default/demo/w';

const images: ImageBuilder = {
  name: 'stand-in',
  build: async (image) => ({ key: image.id, imageId: image.id, pythonPath: 'python3', path: '/nowhere', cached: true }),
};

/** A driver whose containers become healthy when the test says so. */
function gatedDriver(calls: string[]): SchedulerDriver & { healthy(): void; fail(error: Error): void } {
  let settle: { resolve: () => void; reject: (error: Error) => void } | undefined;
  const started = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  return {
    name: 'stand-in',
    submit: async (unit) => void calls.push(`submit ${unit.key}`),
    scale: async (key, count) => {
      calls.push(`scale ${key} ${count}`);
      await started;
    },
    stop: async (key, id) => void calls.push(`stop ${key} ${id}`),
    remove: async (key) => void calls.push(`remove ${key}`),
    status: () => [],
    close: async () => {},
    healthy: () => settle!.resolve(),
    fail: (error) => settle!.reject(error),
  };
}

function manager(routes: RouteTable, driver: SchedulerDriver): DeploymentManager {
  return new DeploymentManager({ plugins: createPluginHost([]), images, driver, routes, baseUrl: () => 'http://gw' });
}

const request = { spec, source: { root: '/src', entry: 'app' }, workspace: 'default', stage: 'deployed' as const, principal: null };
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('DeploymentManager#deploy() and the route table', () => {
  it('adds the routes only after the containers are healthy', async () => {
    const routes = new RouteTable();
    const calls: string[] = [];
    const driver = gatedDriver(calls);
    const deploying = manager(routes, driver).deploy(request);
    await tick();
    assert.deepEqual(calls, ['submit default/demo/deployed@1/w', 'scale default/demo/deployed@1/w 1']);
    assert.equal(routes.match(`${PREFIX}/`), null, 'no route while the container starts');
    driver.healthy();
    const deployment = await deploying;
    assert.equal(routes.match(`${PREFIX}/`)?.entry.unit, 'default/demo/deployed@1/w');
    assert.deepEqual(deployment.units, ['default/demo/deployed@1/w']);
  });

  it('leaves no route and no container behind when a container fails', async () => {
    const routes = new RouteTable();
    const calls: string[] = [];
    const driver = gatedDriver(calls);
    const deploying = manager(routes, driver).deploy(request);
    await tick();
    driver.fail(new SvcError('container_failed', 'exited with 1'));
    await assert.rejects(deploying, (error: unknown) => error instanceof SvcError && error.code === 'container_failed');
    assert.equal(routes.entries().length, 0);
    assert.equal(calls.at(-1), 'remove default/demo/deployed@1/w');
  });

  it('starts nothing when a URL is taken by another unit', async () => {
    const routes = new RouteTable();
    routes.add([routeEntry(endpoint(), 'someone/else', PREFIX)]);
    const calls: string[] = [];
    const driver = gatedDriver(calls);
    driver.healthy();
    await assert.rejects(
      manager(routes, driver).deploy(request),
      (error: unknown) => error instanceof SvcError && error.code === 'conflict',
    );
    assert.deepEqual(calls, []);
    assert.equal(routes.match(`${PREFIX}/`)?.entry.unit, 'someone/else');
  });
});

describe('DeploymentManager and the autoscaler', () => {
  /** Records what the manager asks of it; the real controller is tested in test/core/services/autoscale and test/e2e/autoscale.test.ts. */
  function recordingScaler(calls: string[]): UnitScaler {
    return {
      manage: (unit) => void calls.push(`manage ${unit.key}`),
      stopUnit: async (key) => void calls.push(`stopUnit ${key}`),
      retune: async (key) => (calls.push(`retune ${key}`), null),
      quotaRefusal: (workspace, starting) => (calls.push(`quota ${workspace} ${starting.map(({ count }) => count).join(',')}`), null),
    };
  }

  it('hands each unit to the autoscaler once its first containers are healthy, and removes it through the autoscaler (which drains)', async () => {
    const routes = new RouteTable();
    const calls: string[] = [];
    const driver = gatedDriver(calls);
    driver.healthy();
    const deployments = new DeploymentManager({
      plugins: createPluginHost([]),
      images,
      driver,
      routes,
      baseUrl: () => 'http://gw',
      autoscaler: recordingScaler(calls),
    });
    await deployments.deploy(request);
    assert.deepEqual(calls, [
      'quota default 1',
      'submit default/demo/deployed@1/w',
      'scale default/demo/deployed@1/w 1',
      'manage default/demo/deployed@1/w',
    ]);
    await deployments.remove({ workspace: 'default', app: 'demo', stage: 'deployed' });
    assert.equal(
      calls.at(-1),
      'stopUnit default/demo/deployed@1/w',
      'not driver.remove: the autoscaler lets requests in flight finish first',
    );
    assert.equal(routes.entries().length, 0);
  });

  it('starts max(1, min_containers) containers at deploy time, so a broken app fails the deploy', async () => {
    const calls: string[] = [];
    const driver = gatedDriver(calls);
    driver.healthy();
    const scaling = { ...endpoint().scaling, autoscaler: { minContainers: 2, maxContainers: 3, tasksPerContainer: 1 } };
    const deployments = new DeploymentManager({
      plugins: createPluginHost([]),
      images,
      driver,
      routes: new RouteTable(),
      baseUrl: () => 'http://gw',
      autoscaler: recordingScaler(calls),
    });
    await deployments.deploy({ ...request, spec: { ...spec, workloads: [endpoint({ scaling })] } });
    assert.ok(calls.includes('scale default/demo/deployed@1/w 2'));
  });

  it('hands nothing to the autoscaler when the deploy fails', async () => {
    const calls: string[] = [];
    const driver = gatedDriver(calls);
    const deploying = new DeploymentManager({
      plugins: createPluginHost([]),
      images,
      driver,
      routes: new RouteTable(),
      baseUrl: () => 'http://gw',
      autoscaler: recordingScaler(calls),
    }).deploy(request);
    await tick();
    driver.fail(new SvcError('container_failed', 'exited with 1'));
    await assert.rejects(deploying);
    assert.ok(!calls.some((call) => call.startsWith('manage')), calls.join(', '));
  });
});

describe('DeploymentManager: versions and the switch', () => {
  function startedDriver(calls: string[]): SchedulerDriver {
    return {
      name: 'stand-in',
      submit: async (unit) => void calls.push(`submit ${unit.key}`),
      scale: async () => {},
      stop: async () => {},
      remove: async (key) => void calls.push(`remove ${key}`),
      status: () => [],
      close: async () => {},
    };
  }

  it('two concurrent deploys of one app both get a version; the later one serves and the earlier one is stopped', async () => {
    const calls: string[] = [];
    const routes = new RouteTable();
    const records = new DeploymentRecords(createMemoryStateStore());
    const deployments = new DeploymentManager({
      plugins: createPluginHost([]),
      images,
      driver: startedDriver(calls),
      routes,
      baseUrl: () => 'http://gw',
      records,
    });
    const [first, second] = await Promise.all([deployments.deploy(request), deployments.deploy(request)]);
    assert.deepEqual([first.workloads[0]!.version, second.workloads[0]!.version], [1, 2]);
    assert.deepEqual(
      (await records.deployments('default', 'demo'))[0]!.versions.map((v) => v.version),
      [1, 2],
    );
    assert.equal(routes.match(`${PREFIX}/`)?.entry.unit, second.units[0]);
    assert.ok(calls.includes(`remove ${first.units[0]}`), calls.join(', '));
  });

  it('starts the new version before it stops the old one (the real-container switch is in test/e2e/lifecycle.test.ts)', async () => {
    const calls: string[] = [];
    const routes = new RouteTable();
    const deployments = new DeploymentManager({
      plugins: createPluginHost([]),
      images,
      driver: startedDriver(calls),
      routes,
      baseUrl: () => 'http://gw',
    });
    const first = await deployments.deploy(request);
    const second = await deployments.deploy(request);
    assert.deepEqual(calls, [`submit ${first.units[0]}`, `submit ${second.units[0]}`, `remove ${first.units[0]}`]);
    assert.equal(routes.match(`${PREFIX}/`)?.entry.unit, second.units[0]);
  });
});

describe('DeploymentManager#restore() and transitions asked for meanwhile', () => {
  /** A driver whose containers are healthy at once; `running` holds the units with containers. */
  function liveDriver(): SchedulerDriver & { running: Set<string> } {
    const running = new Set<string>();
    return {
      name: 'stand-in',
      running,
      submit: async () => {},
      scale: async (key) => void running.add(key),
      stop: async () => {},
      remove: async (key) => void running.delete(key),
      status: () => [],
      close: async () => {},
    };
  }

  it('a deploy that arrives while restore runs (svc server already listens) waits for it: one unit runs, the one the route leads to', async () => {
    const store = createMemoryStateStore();
    const options = { plugins: createPluginHost([]), images, baseUrl: () => 'http://gw', records: new DeploymentRecords(store) };
    await new DeploymentManager({ ...options, driver: liveDriver(), routes: new RouteTable() }).deploy(request);
    const driver = liveDriver();
    const routes = new RouteTable();
    const restarted = new DeploymentManager({ ...options, driver, routes });
    const restoring = restarted.restore();
    const deployment = await restarted.deploy(request);
    await restoring;
    assert.deepEqual([...driver.running], deployment.units);
    assert.equal(routes.match(`${PREFIX}/`)?.entry.unit, deployment.units[0]);
    assert.equal(deployment.workloads[0]?.version, 2);
  });
});
