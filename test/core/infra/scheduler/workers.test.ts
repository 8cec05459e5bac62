import assert from 'node:assert/strict';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import type { Instance } from '../../../../core/infra/registry/types.js';
import { createLocalDriver, type LocalDriver } from '../../../../core/infra/scheduler/local/driver.js';
import type { LogLine } from '../../../../core/infra/scheduler/types.js';
import { pidsMatching } from '../../../helpers/processes.js';
import { fixtureUnit, recordDir, runtimeImage } from './fixture-units.js';
import { until } from '../../../helpers/until.js';
import { getJson } from './unix-http.js';

describe('createLocalDriver() with several workers per container', function () {
  this.timeout(120_000);
  let image: BuiltImage;
  let driver: LocalDriver | undefined;

  before(async () => {
    image = await runtimeImage();
    recordDir();
  });
  afterEach(async () => driver?.close());

  function setup() {
    const registry = createEmbeddedRegistry();
    const logs: LogLine[] = [];
    driver = createLocalDriver({ registry, logs: (line) => logs.push(line) });
    const unit = fixtureUnit(image, 'workers', 'parallel', { workers: 2, concurrency: 2 });
    return { registry, logs, driver, unit };
  }

  it('registers one instance per worker, with the concurrency as its capacity', async () => {
    const t = setup();
    await t.driver.submit(t.unit);
    await t.driver.scale(t.unit.key, 1);
    const [container] = t.driver.status(t.unit.key);
    assert.ok(container);
    const instances = t.registry.instances(t.unit.key);
    assert.deepEqual(instances.map((i) => i.id).sort(), [`${container.id}-w0`, `${container.id}-w1`]);
    assert.deepEqual(
      instances.map((i) => i.capacity),
      [2, 2],
    );
    assert.deepEqual(
      instances.map((i) => i.meta.container),
      [container.id, container.id],
    );
    const pids = container.workers.map((w) => w.pid);
    assert.equal(new Set(pids).size, 2, 'two worker processes');
    assert.ok(!pids.includes(container.pid), 'workers are not the supervisor');
    for (const worker of container.workers) {
      const { body } = await getJson(worker.socketPath, '/parallel?seconds=0');
      assert.equal((body as { pid: number }).pid, worker.pid, 'each socket is served by its own worker');
    }
    assert.equal(pidsMatching(t.driver.socketDir).length, 3, 'a supervisor and two workers');
  });

  it('restarts a worker killed with SIGKILL, deregisters it while it is down and registers it again', async () => {
    const t = setup();
    await t.driver.submit(t.unit);
    await t.driver.scale(t.unit.key, 1);
    const [container] = t.driver.status(t.unit.key);
    const [victim, survivor] = container!.workers;
    const seen: string[][] = [];
    t.registry.watch((_service, instances: readonly Instance[]) => seen.push(instances.map((i) => i.id).sort()));

    process.kill(victim!.pid!, 'SIGKILL');
    await until('the dead worker is deregistered', () => seen.some((ids) => ids.length === 1), 5_000);
    assert.deepEqual(
      seen.find((ids) => ids.length === 1),
      [survivor!.instanceId],
      'the other worker stays registered',
    );
    await until('the restarted worker is registered again', () => t.registry.instances(t.unit.key).length === 2, 10_000);

    const [after] = t.driver.status(t.unit.key);
    assert.equal(after!.pid, container!.pid, 'the same supervisor');
    assert.equal(after!.state, 'healthy');
    const restarted = after!.workers[0]!;
    assert.notEqual(restarted.pid, victim!.pid);
    const { status, body } = await getJson(restarted.socketPath, '/parallel?seconds=0');
    assert.equal(status, 200);
    assert.equal((body as { pid: number }).pid, restarted.pid);
    const text = t.logs.map((line) => line.text).join('\n');
    assert.match(text, /worker 0 \(pid \d+\) exited with signal SIGKILL; restarting it in 0\.1 s/);
    assert.match(text, new RegExp(`worker 0 of ${container!.id} is back \\(pid ${restarted.pid}\\) and registered`));
  });

  it('drains requests in flight when the container stops', async () => {
    const t = setup();
    await t.driver.submit(t.unit);
    await t.driver.scale(t.unit.key, 1);
    const [container] = t.driver.status(t.unit.key);
    const slow = getJson(container!.workers[0]!.socketPath, '/parallel?seconds=1');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await t.driver.scale(t.unit.key, 0);
    const { status } = await slow;
    assert.equal(status, 200, 'the request in flight finished');
    assert.deepEqual(pidsMatching(t.driver.socketDir), []);
  });
});
