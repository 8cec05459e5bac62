import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import { createVenvBuilder } from '../../../../core/infra/images/venv-builder.js';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import { loadManifest } from '../../../../core/infra/manifest-loader/load.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import { createLocalDriver } from '../../../../core/infra/scheduler/local/driver.js';
import type { DeploymentUnit, LogLine, SchedulerDriver } from '../../../../core/infra/scheduler/types.js';
import type { Workload } from '../../../../core/model/workload/types.js';
import { quickstartApp, testCacheDir } from '../../../helpers/config.js';
import { pidsMatching, waitNoneMatching } from '../../../helpers/processes.js';

describe('createLocalDriver()', function () {
  this.timeout(120_000);
  let hello: Workload;
  let image: BuiltImage;
  let root: string;

  before(async () => {
    const manifest = await loadManifest({ target: quickstartApp });
    hello = manifest.spec.workloads.find((w) => w.name === 'hello')!;
    root = manifest.root;
    image = await createVenvBuilder({ cacheDir: testCacheDir, python: process.env.SVC_PYTHON ?? 'python3' }).build(hello.image, () => {});
  });

  function setup() {
    const registry = createEmbeddedRegistry();
    const logs: LogLine[] = [];
    const exits: string[] = [];
    const driver = createLocalDriver({
      registry,
      logs: (line) => logs.push(line),
      onContainerExit: (_unit, id, reason) => exits.push(`${id} ${reason}`),
    });
    const unit = (workload: Workload = hello): DeploymentUnit => ({
      key: `default/quickstart/preview/${workload.name}`,
      ref: { workspace: 'default', app: 'quickstart', stage: 'preview' },
      workload,
      image,
      source: { root, entry: 'app' },
    });
    return { registry, driver, logs, exits, unit, marker: driver.socketDir };
  }

  let driver: SchedulerDriver | undefined;
  afterEach(async () => driver?.close());

  it('starts healthy containers, registers them, scales down and removes them', async () => {
    const t = setup();
    driver = t.driver;
    const unit = t.unit();
    await t.driver.submit(unit);
    await t.driver.scale(unit.key, 2);
    const instances = t.registry.instances(unit.key);
    assert.equal(instances.length, 2, 'one instance per worker, one worker per container');
    assert.notDeepEqual(instances[0]!.address, instances[1]!.address, 'each worker has its own socket');
    assert.equal(instances[0]!.capacity, hello.scaling.concurrency);
    const status = t.driver.status(unit.key);
    assert.deepEqual(
      status.map((c) => c.state),
      ['healthy', 'healthy'],
    );
    assert.deepEqual(instances.map((i) => i.id).sort(), status.map((c) => `${c.id}-w0`).sort());
    assert.equal(pidsMatching(t.marker).length, 4, 'a supervisor and a worker per container');

    await t.driver.scale(unit.key, 1);
    assert.equal(t.registry.instances(unit.key).length, 1);
    await t.driver.remove(unit.key);
    assert.equal(t.registry.instances(unit.key).length, 0);
    assert.deepEqual(await waitNoneMatching(t.marker, 5_000), []);
    assert.ok(
      t.logs.some((line) => line.stream === 'stderr' && line.text.includes('listening on')),
      'the runtime logs reach the sink',
    );
  });

  it('rejects with container_failed and the last log lines when a container exits while starting', async () => {
    const t = setup();
    driver = t.driver;
    const unit = t.unit({ ...hello, name: 'missing' });
    await t.driver.submit(unit);
    await assert.rejects(t.driver.scale(unit.key, 1), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'container_failed');
      assert.match(error.message, /exited with code 2/);
      assert.match(error.message, /no workload named 'missing'/);
      return true;
    });
    assert.equal(t.registry.instances(unit.key).length, 0);
    assert.deepEqual(t.driver.status(unit.key), []);
  });

  it('deregisters a container that dies after becoming healthy, and says why', async () => {
    const t = setup();
    driver = t.driver;
    const unit = t.unit();
    await t.driver.submit(unit);
    await t.driver.scale(unit.key, 1);
    const [container] = t.driver.status(unit.key);
    process.kill(container!.pid!, 'SIGKILL');
    const deadline = Date.now() + 5_000;
    while (t.registry.instances(unit.key).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(t.registry.instances(unit.key).length, 0);
    assert.equal(t.exits.length, 1);
    assert.match(t.exits[0]!, /exited unexpectedly with signal SIGKILL/);
  });

  it('stop() stops exactly the container it names and leaves the others serving', async () => {
    const t = setup();
    driver = t.driver;
    const unit = t.unit();
    await t.driver.submit(unit);
    await t.driver.scale(unit.key, 2);
    const [first, second] = t.driver.status(unit.key);
    assert.ok(first!.healthyAt && first!.healthyAt >= first!.startedAt, 'a healthy container says since when');
    // The first one: scale() would have stopped the newest.
    await t.driver.stop(unit.key, first!.id);
    assert.deepEqual(
      t.driver.status(unit.key).map((c) => c.id),
      [second!.id],
    );
    assert.deepEqual(
      t.registry.instances(unit.key).map((i) => i.meta.container),
      [second!.id],
    );
    assert.deepEqual(t.exits, [], 'a stop is not an unexpected exit');
    await t.driver.stop(unit.key, first!.id); // again: nothing to do
    await t.driver.stop('another/unit', second!.id); // not that unit's container
    assert.equal(t.driver.status(unit.key).length, 1);
  });

  it('refuses to scale a unit it does not know', async () => {
    const t = setup();
    driver = t.driver;
    await assert.rejects(t.driver.scale('nope', 1), /no deployment unit nope/);
  });
});
