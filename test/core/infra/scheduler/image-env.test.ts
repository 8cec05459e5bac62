/**
 * An image's variables (`Image.env`, `ImageSpec.env`) in a real container's
 * environment, spawned or forked from the image's zygote: over the server's
 * own environment, under the workload's secrets and svc's own variables.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import { createLocalDriver, type LocalDriver } from '../../../../core/infra/scheduler/local/driver.js';
import type { DeploymentUnit } from '../../../../core/infra/scheduler/types.js';
import { tempDir } from '../../../helpers/config.js';
import { until } from '../../../helpers/until.js';
import { fixtureUnit, runtimeImage } from './fixture-units.js';
import { getJson } from './unix-http.js';

const APP = `
import os
import svc

app = svc.App("envs")


@app.endpoint(route="/environ", methods=["GET"], authorized=False)
def environ() -> dict:
    return dict(os.environ)
`;

const IMAGE_ENV = { IMAGE_ENV_TEST_ONLY: 'from-image', IMAGE_ENV_TEST_SHARED: 'from-image', HOME_OF_MODELS: '/tmp/models ünï "q"' };

describe('createLocalDriver(): the image environment of a container', function () {
  this.timeout(120_000);
  let image: BuiltImage;
  let root: string;
  let driver: LocalDriver | undefined;
  const saved = process.env.IMAGE_ENV_TEST_ONLY;

  before(async () => {
    image = await runtimeImage();
    root = tempDir('svc-image-env-');
    writeFileSync(path.join(root, 'app.py'), APP);
    // The server's own value: the image's wins over it.
    process.env.IMAGE_ENV_TEST_ONLY = 'from-server';
  });
  after(() => {
    if (saved === undefined) delete process.env.IMAGE_ENV_TEST_ONLY;
    else process.env.IMAGE_ENV_TEST_ONLY = saved;
  });
  afterEach(async () => driver?.close());

  function unit(serial: number): DeploymentUnit {
    const base = fixtureUnit(image, 'app', 'environ', {});
    return {
      ...base,
      key: `default/envs/preview/environ#${serial}`,
      ref: { workspace: 'default', app: 'envs', stage: 'preview' },
      workload: { ...base.workload, image: { ...base.workload.image, env: IMAGE_ENV } },
      source: { root, entry: 'app' },
      secretEnv: { IMAGE_ENV_TEST_SHARED: 'from-secret' },
    };
  }

  async function environOf(d: LocalDriver, started: DeploymentUnit): Promise<Record<string, string>> {
    const socket = d.status(started.key)[0]!.workers[0]!.socketPath;
    return (await getJson(socket, '/environ')).body as Record<string, string>;
  }

  function assertLayered(environ: Record<string, string>): void {
    assert.equal(environ.IMAGE_ENV_TEST_ONLY, 'from-image', "the image's value, over the server's");
    assert.equal(environ.IMAGE_ENV_TEST_SHARED, 'from-secret', "a secret's value, over the image's");
    assert.equal(environ.HOME_OF_MODELS, '/tmp/models ünï "q"');
    assert.equal(environ.SVC_WORKLOAD, 'environ', "svc's own variables are still there");
  }

  it('a spawned container gets the variables', async () => {
    driver = createLocalDriver({ registry: createEmbeddedRegistry(), logs: () => {}, zygotes: false });
    const spawned = unit(1);
    await driver.submit(spawned);
    await driver.scale(spawned.key, 1);
    assertLayered(await environOf(driver, spawned));
  });

  it("a container forked from the image's zygote gets them too", async () => {
    const lines: string[] = [];
    driver = createLocalDriver({ registry: createEmbeddedRegistry(), logs: (line) => lines.push(line.text), zygotes: true });
    const first = unit(1);
    await driver.submit(first);
    await driver.scale(first.key, 1);
    await until('the zygote is ready', () => driver!.zygote(image.pythonPath)?.state === 'ready', 60_000);
    const forked = unit(2);
    await driver.submit(forked);
    await driver.scale(forked.key, 1);
    assert.ok(
      lines.some((line) => /forked from zygote/.test(line)),
      lines.join('\n'),
    );
    assertLayered(await environOf(driver, forked));
  });
});
