import assert from 'node:assert/strict';
import { defaultClusterSettings } from '../../../../../jobs/context.js';
import { createPluginHost } from '../../../../../core/infra/plugin/host.js';
import { createUnitCompiler } from '../../../../../core/infra/scheduler/nomad/unit-compiler.js';
import { SvcError } from '../../../../../core/model/errors.js';
import { nomadUnit } from '../nomad-fixture.js';

describe('the Nomad unit compiler and volumes', () => {
  const compile = createUnitCompiler({
    cluster: { ...defaultClusterSettings, driver: 'raw_exec' },
    python: '/usr/bin/python3',
    plugins: createPluginHost([]),
    bundleUrl: (sha) => `https://svc.example.com/api/v1/bundles/${sha}.tar.gz`,
  });
  const withBundle = (unit: ReturnType<typeof nomadUnit>) => ({ ...unit, source: { ...unit.source, bundleSha256: 'ab'.repeat(32) } });

  it('compiles a unit that mounts nothing', async () => {
    const body = await compile(withBundle(nomadUnit('plain')));
    assert.equal(body.Job.TaskGroups![0]!.Tasks![0]!.VolumeMounts, undefined);
  });

  it('refuses a unit that mounts a volume, saying Nomad does not run them yet and what to do', async () => {
    const unit = nomadUnit('reader');
    const mounting = withBundle({
      ...unit,
      workload: { ...unit.workload, volumes: [{ path: '/data', volume: 'models', readOnly: true }] },
    });
    await assert.rejects(
      async () => compile(mounting),
      (error: Error) => {
        assert.ok(error instanceof SvcError);
        assert.equal(error.code, 'bad_request');
        assert.equal(error.message, 'demo/reader mounts volumes, which svc does not run on Nomad yet.');
        assert.match(error.hint ?? '', /scheduler: local/);
        return true;
      },
    );
  });
});
