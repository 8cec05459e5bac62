import assert from 'node:assert/strict';
import { SvcError } from '../../core/model/errors.js';
import type { LoadedManifest } from '../../core/infra/manifest-loader/load.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import type { LogLine } from '../../core/infra/scheduler/types.js';
import { testConfig } from '../helpers/config.js';
import { deployRequest, lifecycleManifests } from './lifecycle-helpers.js';

/** A platform as `svc server` starts it (no `zygotes` option), its log lines, and the lifecycle app deployed. */
async function deployed(manifest: LoadedManifest): Promise<{ platform: Platform; lines: LogLine[]; unit: string }> {
  const lines: LogLine[] = [];
  const platform = await startPlatform({ config: testConfig(), logs: (line) => lines.push(line) });
  const deployment = await platform.deployments.deploy(deployRequest(manifest, { workload: 'hello' }));
  return { platform, lines, unit: deployment.units[0]! };
}

const texts = (lines: readonly LogLine[]) => lines.map((line) => line.text).join('\n');

describe('startPlatform(): zygotes', function () {
  this.timeout(120_000);
  let manifest: LoadedManifest;
  let platform: Platform | undefined;
  const previous = process.env.SVC_ZYGOTES;

  before(async () => {
    manifest = (await lifecycleManifests()).v1;
  });
  afterEach(async () => {
    await platform?.close();
    platform = undefined;
    if (previous === undefined) delete process.env.SVC_ZYGOTES;
    else process.env.SVC_ZYGOTES = previous;
  });

  it("forks a workload's containers, its first too, from a zygote of its image by default", async () => {
    delete process.env.SVC_ZYGOTES;
    const started = await deployed(manifest);
    platform = started.platform;
    assert.match(texts(started.lines), /zygote ready/);
    await platform.driver.scale(started.unit, 2);
    assert.equal(texts(started.lines).match(/container c-\w+ forked from zygote z-\w+/g)?.length, 2);
    assert.equal(platform.driver.status(started.unit).filter((c) => c.state === 'healthy').length, 2);
  });

  it('spawns every container as a new process with SVC_ZYGOTES=0', async () => {
    process.env.SVC_ZYGOTES = '0';
    const started = await deployed(manifest);
    platform = started.platform;
    await platform.driver.scale(started.unit, 2);
    assert.equal(platform.driver.status(started.unit).filter((c) => c.state === 'healthy').length, 2);
    assert.doesNotMatch(texts(started.lines), /zygote/);
  });

  it('refuses to start with SVC_ZYGOTES=maybe, as config_invalid', async () => {
    process.env.SVC_ZYGOTES = 'maybe';
    await assert.rejects(
      startPlatform({ config: testConfig() }).then((started) => (platform = started)),
      (error: unknown) => {
        assert.ok(error instanceof SvcError, String(error));
        assert.equal(error.code, 'config_invalid');
        assert.match(error.message, /SVC_ZYGOTES must be 0 or 1, got "maybe"/);
        return true;
      },
    );
  });
});
