import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { SvcError } from '../../../../core/model/errors.js';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import { createLocalDriver, type LocalDriver } from '../../../../core/infra/scheduler/local/driver.js';
import type { DeploymentUnit, LogLine } from '../../../../core/infra/scheduler/types.js';
import { tempDir } from '../../../helpers/config.js';
import { pidsMatching, waitNoneMatching } from '../../../helpers/processes.js';
import { fixtureUnit, runtimeImage } from './fixture-units.js';
import { until } from '../../../helpers/until.js';
import { getJson } from './unix-http.js';

const APP = (version: string) => `
import os
import sys
import svc

import helper_${version}

app = svc.App("zyg")


@app.endpoint(route="/who", methods=["GET"], authorized=False)
def who() -> dict:
    return {"version": "${version}", "cwd": os.getcwd(), "workload": os.environ.get("SVC_WORKLOAD"),
            "helpers": sorted(name for name in sys.modules if name.startswith("helper_"))}
`;

type Answer = { version: string; cwd: string; workload: string; helpers: string[] };

/** A version of the app in a folder of its own, as bundles are extracted. */
function version(name: string, source = APP(name)): string {
  const root = tempDir(`svc-zyg-${name}-`);
  writeFileSync(path.join(root, 'app.py'), source);
  writeFileSync(path.join(root, `helper_${name}.py`), '');
  return root;
}

describe('createLocalDriver() with zygotes', function () {
  this.timeout(120_000);
  let image: BuiltImage;
  let driver: LocalDriver | undefined;

  before(async () => {
    image = await runtimeImage();
  });
  afterEach(async () => driver?.close());

  function setup() {
    const logs: LogLine[] = [];
    const registry = createEmbeddedRegistry();
    driver = createLocalDriver({ registry, logs: (line) => logs.push(line), zygotes: true });
    const unit = (root: string, serial: number): DeploymentUnit => ({
      ...fixtureUnit(image, 'app', 'who', {}),
      key: `default/zyg/preview/who#${serial}`,
      ref: { workspace: 'default', app: 'zyg', stage: 'preview' },
      source: { root, entry: 'app' },
    });
    return { driver, logs, unit, text: () => logs.map((line) => line.text).join('\n') };
  }

  async function answer(d: LocalDriver, unit: DeploymentUnit): Promise<Answer> {
    const socket = d.status(unit.key)[0]!.workers[0]!.socketPath;
    return (await getJson(socket, '/who')).body as Answer;
  }

  it("forks the containers of later versions from the image's zygote, each importing its own code fresh", async () => {
    const t = setup();
    const v1 = t.unit(version('one'), 1);
    await t.driver.submit(v1);
    await t.driver.scale(v1.key, 1);
    assert.equal(t.driver.zygote(image.pythonPath)?.state, 'ready', "the image's first container started its zygote");
    assert.match(t.text(), /container c-\w+ forked from zygote z-\w+/, 'and forked from it, instead of a process of its own beside it');
    assert.equal(t.text().match(/starting zygote z-\w+/g)?.length, 1);

    const v2 = t.unit(version('two'), 2);
    await t.driver.submit(v2);
    await t.driver.scale(v2.key, 1);
    assert.equal(t.text().match(/container c-\w+ forked from zygote z-\w+/g)?.length, 2);
    assert.equal(t.text().match(/starting zygote z-\w+/g)?.length, 1, 'one zygote serves every version of the image');
    const [one, two] = [await answer(t.driver, v1), await answer(t.driver, v2)];
    assert.deepEqual([one.version, one.helpers], ['one', ['helper_one']]);
    assert.deepEqual([two.version, two.helpers], ['two', ['helper_two']], 'nothing of the other version');
    assert.equal(two.cwd, v2.source.root, 'the container runs in its own code folder');
    assert.equal(two.workload, 'who', "the container's environment");
    assert.equal(t.driver.status(v2.key)[0]!.startedFrom, 'process');

    const zygotePid = t.driver.zygote(image.pythonPath)!.pid!;
    await t.driver.close();
    driver = undefined;
    assert.deepEqual(await waitNoneMatching(t.driver.socketDir, 5_000), [], 'no zygote, container or worker is left');
    assert.ok(!pidsMatching(t.driver.socketDir).includes(zygotePid));
  });

  it('fails a forked container whose code does not import with container_failed and the traceback', async () => {
    const t = setup();
    const v1 = t.unit(version('one'), 1);
    await t.driver.submit(v1);
    await t.driver.scale(v1.key, 1);
    await until('the zygote is ready', () => t.driver.zygote(image.pythonPath)?.state === 'ready', 60_000);
    const broken = t.unit(version('broken', 'import svc\ndef oops(:\n'), 2);
    await t.driver.submit(broken);
    await assert.rejects(t.driver.scale(broken.key, 1), (error: unknown) => {
      assert.ok(error instanceof SvcError && error.code === 'container_failed');
      assert.match(error.message, /exited with code 3/);
      assert.match(error.message, /SyntaxError/);
      return true;
    });
    assert.match(t.text(), /forked from zygote/);
    assert.equal((await answer(t.driver, v1)).version, 'one', 'the other version still serves');
  });

  it('starts no zygote without the option: every container is a new process, as before', async () => {
    const logs: LogLine[] = [];
    driver = createLocalDriver({ registry: createEmbeddedRegistry(), logs: (line) => logs.push(line), zygotes: false });
    const root = version('one');
    const unit: DeploymentUnit = { ...fixtureUnit(image, 'app', 'who', {}), source: { root, entry: 'app' } };
    await driver.submit(unit);
    await driver.scale(unit.key, 2);
    assert.equal(driver.zygote(image.pythonPath), undefined);
    assert.doesNotMatch(logs.map((line) => line.text).join('\n'), /zygote/);
  });
});
