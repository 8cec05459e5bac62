import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import { createLocalDriver, type LocalDriver } from '../../../../core/infra/scheduler/local/driver.js';
import type { DeploymentUnit, LogLine } from '../../../../core/infra/scheduler/types.js';
import { pidsMatching, waitNoneMatching } from '../../../helpers/processes.js';
import { fixtureUnit, onStartCalls, recordDir, runtimeImage } from './fixture-units.js';
import { until } from '../../../helpers/until.js';
import { getJson } from './unix-http.js';

type Answer = { pid: number; on_start_value: { warmed_in: number } | null };

describe('createLocalDriver() with checkpoint_enabled', function () {
  this.timeout(120_000);
  let image: BuiltImage;
  let driver: LocalDriver | undefined;
  let record: string;

  before(async () => {
    image = await runtimeImage();
  });
  beforeEach(() => {
    record = recordDir();
  });
  afterEach(async () => driver?.close());

  function setup() {
    const registry = createEmbeddedRegistry();
    const logs: LogLine[] = [];
    driver = createLocalDriver({ registry, logs: (line) => logs.push(line) });
    const warm = fixtureUnit(image, 'checkpoint', 'warm', { workers: 2, checkpointEnabled: true });
    const cold = fixtureUnit(image, 'checkpoint', 'cold', { workers: 2 });
    const text = () => logs.map((line) => line.text).join('\n');
    return { registry, logs, text, driver, warm, cold };
  }

  async function answers(d: LocalDriver, unit: DeploymentUnit): Promise<Answer[]> {
    const sockets = d.status(unit.key).flatMap((c) => c.workers.map((w) => w.socketPath));
    return Promise.all(sockets.map(async (socket) => (await getJson(socket, `/${unit.workload.name}`)).body as Answer));
  }

  it('runs on_start once for 2 containers of 2 workers, all forked from the template', async () => {
    const t = setup();
    await t.driver.submit(t.warm);
    await t.driver.scale(t.warm.key, 1);
    await t.driver.scale(t.warm.key, 2);
    const template = t.driver.template(t.warm.key);
    assert.equal(template?.state, 'ready');
    assert.deepEqual(onStartCalls(record, 'warm'), [template.pid], 'on_start ran once, in the template');
    const containers = t.driver.status(t.warm.key);
    assert.deepEqual(
      containers.map((c) => c.startedFrom),
      ['template', 'template'],
    );
    assert.equal(t.registry.instances(t.warm.key).length, 4);
    const replies = await answers(t.driver, t.warm);
    assert.equal(new Set(replies.map((r) => r.pid)).size, 4, 'four worker processes');
    for (const reply of replies)
      assert.deepEqual(reply.on_start_value, { warmed_in: template.pid }, "every worker has the template's value");
    assert.match(t.text(), /container c-\w+ forked from checkpoint template t-\w+/);
  });

  it('runs on_start in every worker without it', async () => {
    const t = setup();
    await t.driver.submit(t.cold);
    await t.driver.scale(t.cold.key, 2);
    assert.equal(t.driver.template(t.cold.key), undefined, 'no template');
    const workerPids = t.driver.status(t.cold.key).flatMap((c) => c.workers.map((w) => w.pid));
    assert.deepEqual(onStartCalls(record, 'cold').sort(), [...workerPids].sort(), 'once per worker, in the worker');
    for (const reply of await answers(t.driver, t.cold)) assert.deepEqual(reply.on_start_value, { warmed_in: reply.pid });
  });

  it('restarts a dead worker of a forked container from the warmed state, without on_start', async () => {
    const t = setup();
    await t.driver.submit(t.warm);
    await t.driver.scale(t.warm.key, 1);
    const [container] = t.driver.status(t.warm.key);
    process.kill(container!.workers[1]!.pid!, 'SIGKILL');
    await until('the dead worker is deregistered', () => t.registry.instances(t.warm.key).length === 1, 5_000);
    await until('its replacement is registered', () => t.registry.instances(t.warm.key).length === 2, 10_000);
    assert.equal(onStartCalls(record, 'warm').length, 1);
    const template = t.driver.template(t.warm.key)!;
    for (const reply of await answers(t.driver, t.warm)) assert.deepEqual(reply.on_start_value, { warmed_in: template.pid });
  });

  it('falls back to a normal start, and says so, when the template was killed', async () => {
    const t = setup();
    await t.driver.submit(t.warm);
    await t.driver.scale(t.warm.key, 1);
    const template = t.driver.template(t.warm.key)!;
    process.kill(template.pid!, 'SIGKILL');
    await until('the driver notices', () => t.driver.template(t.warm.key)?.state === 'exited', 5_000);
    await t.driver.scale(t.warm.key, 2);

    const [first, second] = t.driver.status(t.warm.key);
    assert.equal(first!.startedFrom, 'template', 'the forked container keeps serving');
    assert.equal(second!.startedFrom, 'process');
    assert.equal(t.registry.instances(t.warm.key).length, 4);
    assert.match(t.text(), /checkpoint template t-\w+ it exited with signal SIGKILL; new containers of warm start without it/);
    assert.match(
      t.text(),
      /checkpoint template of warm cannot be used \(it exited with signal SIGKILL\); starting container c-\w+ without it/,
    );
    // The fallback container still warms up once for its two workers: checkpoint_enabled holds inside it.
    const calls = onStartCalls(record, 'warm');
    assert.deepEqual(calls, [template.pid, second!.pid]);
  });

  it('fails the container with the traceback when on_start fails', async () => {
    const t = setup();
    const broken = fixtureUnit(image, 'broken_start', 'broken', { checkpointEnabled: true });
    await t.driver.submit(broken);
    await assert.rejects(t.driver.scale(broken.key, 1), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'container_failed');
      assert.match(error.message, /exited with code 5/);
      assert.match(error.message, /ZeroDivisionError/);
      return true;
    });
    assert.equal(t.driver.template(broken.key)?.state, 'failed');
    assert.match(t.text(), /checkpoint template of broken cannot be used \(it exited with code 5\)/);
  });

  it('stops the template with its unit, and leaves no process behind', async () => {
    const t = setup();
    await t.driver.submit(t.warm);
    await t.driver.submit(t.cold);
    await t.driver.scale(t.warm.key, 2);
    await t.driver.scale(t.cold.key, 1);
    assert.equal(
      pidsMatching(t.driver.socketDir).length,
      1 + 2 * 3 + 3,
      'template, 2 × (supervisor + 2 workers), 1 × (supervisor + 2 workers)',
    );
    const templatePid = t.driver.template(t.warm.key)!.pid!;
    await t.driver.remove(t.warm.key);
    assert.equal(t.driver.template(t.warm.key), undefined);
    assert.ok(!pidsMatching(t.driver.socketDir).includes(templatePid));
    assert.equal(pidsMatching(t.driver.socketDir).length, 3);
    await t.driver.close();
    assert.deepEqual(await waitNoneMatching(t.driver.socketDir, 5_000), []);
  });
});
