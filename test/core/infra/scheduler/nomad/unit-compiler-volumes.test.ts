import assert from 'node:assert/strict';
import { defaultClusterSettings } from '../../../../../jobs/context.js';
import { createPluginHost } from '../../../../../core/infra/plugin/host.js';
import { createUnitCompiler } from '../../../../../core/infra/scheduler/nomad/unit-compiler.js';
import { SvcError } from '../../../../../core/model/errors.js';
import { nomadUnit } from '../nomad-fixture.js';

describe('the Nomad unit compiler and volumes', () => {
  const compilerFor = (driver: 'raw_exec' | 'exec', volumes: 'host' | 'csi' = 'host') =>
    createUnitCompiler({
      cluster: { ...defaultClusterSettings, driver, volumes },
      python: '/usr/bin/python3',
      plugins: createPluginHost([]),
      bundleUrl: (sha) => `https://svc.example.com/api/v1/bundles/${sha}.tar.gz`,
    });
  const withBundle = (unit: ReturnType<typeof nomadUnit>) => ({ ...unit, source: { ...unit.source, bundleSha256: 'ab'.repeat(32) } });
  const unit = nomadUnit('reader');
  const mounting = withBundle({
    ...unit,
    workload: {
      ...unit.workload,
      volumes: [
        { path: '/data', volume: 'models', readOnly: true },
        { path: '/out', volume: 'outputs', readOnly: false },
      ],
    },
  });

  it('compiles a unit that mounts nothing without volumes', async () => {
    const group = (await compilerFor('exec')(withBundle(nomadUnit('plain')))).Job.TaskGroups![0]!;
    assert.equal(group.Volumes, undefined);
    assert.equal(group.Tasks![0]!.VolumeMounts, undefined);
  });

  it('mounts each volume as the host volume svc registers for it, with the exec driver', async () => {
    const group = (await compilerFor('exec')(mounting)).Job.TaskGroups![0]!;
    const request = (alias: string, source: string, readOnly: boolean) => ({
      Name: alias,
      Type: 'host',
      Source: source,
      ReadOnly: readOnly,
      AccessMode: 'single-node-multi-writer',
      AttachmentMode: 'file-system',
    });
    assert.deepEqual(group.Volumes, {
      'volume-0': request('volume-0', 'svc-default--models', true),
      'volume-1': request('volume-1', 'svc-default--outputs', false),
    });
    assert.deepEqual(group.Tasks![0]!.VolumeMounts, [
      { Volume: 'volume-0', Destination: '/data', ReadOnly: true },
      { Volume: 'volume-1', Destination: '/out', ReadOnly: false },
    ]);
  });

  it('with a CSI plugin, mounts each as its CSI volume, claimed for writing by every node; read-only in the task', async () => {
    const group = (await compilerFor('exec', 'csi')(mounting)).Job.TaskGroups![0]!;
    const request = (alias: string, source: string) => ({
      Name: alias,
      Type: 'csi',
      Source: source,
      ReadOnly: false,
      AccessMode: 'multi-node-multi-writer',
      AttachmentMode: 'file-system',
    });
    assert.deepEqual(group.Volumes, {
      'volume-0': request('volume-0', 'svc-default--models'),
      'volume-1': request('volume-1', 'svc-default--outputs'),
    });
    assert.deepEqual(group.Tasks![0]!.VolumeMounts, [
      { Volume: 'volume-0', Destination: '/data', ReadOnly: true },
      { Volume: 'volume-1', Destination: '/out', ReadOnly: false },
    ]);
  });

  it('refuses a unit that mounts a volume with raw_exec, which Nomad cannot mount into, saying what to do', async () => {
    await assert.rejects(
      async () => compilerFor('raw_exec')(mounting),
      (error: Error) => {
        assert.ok(error instanceof SvcError);
        assert.equal(error.code, 'bad_request');
        assert.equal(error.message, "demo/reader mounts volumes, which Nomad's raw_exec driver cannot.");
        assert.match(error.hint ?? '', /nomadDriver "exec" or "docker"/);
        return true;
      },
    );
  });
});
