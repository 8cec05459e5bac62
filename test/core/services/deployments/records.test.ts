/** The durable records of deployed apps on a state store: versions, compare-and-set under concurrency. */
import assert from 'node:assert/strict';
import { MAX_OPENAPI_BYTES } from '../../../../core/services/app-api/types.js';
import { DeploymentRecords, KEPT_VERSIONS, type NewVersion } from '../../../../core/services/deployments/records.js';
import { openFileStateStore } from '../../../../core/infra/state/file-store.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { endpoint } from '../../traffic/gateway/harness.js';
import { tempDir } from '../../../helpers/config.js';

const version = (name = 'w', bundleSha256 = 'a'.repeat(64)): NewVersion => ({
  bundleSha256,
  sourceRoot: '/code',
  entry: 'app',
  sdkVersion: '0.1.0',
  workload: endpoint({ name }),
  createdBy: 'owner',
});

describe('DeploymentRecords', () => {
  it('numbers versions per workload and keeps the last ten', async () => {
    const records = new DeploymentRecords(createMemoryStateStore());
    for (let i = 0; i < KEPT_VERSIONS + 2; i++) await records.addVersions('default', 'demo', [version()]);
    const [record] = await records.deployments('default', 'demo');
    assert.equal(record!.currentVersion, KEPT_VERSIONS + 2);
    assert.deepEqual(
      record!.versions.map((v) => v.version),
      Array.from({ length: KEPT_VERSIONS }, (_, i) => i + 3),
    );
    assert.equal(record!.status, 'running');
  });

  it('loses no version when many deploys of the same app write at once (separate writers on one file store: compare-and-set)', async () => {
    const store = await openFileStateStore({ dataDir: tempDir() });
    try {
      // Separate writers on one store, as two svc replicas on one Consul KV would be.
      const writers = Array.from({ length: 8 }, () => new DeploymentRecords(store));
      const numbers = await Promise.all(
        writers.map((records, i) => records.addVersions('default', 'demo', [version('w', String(i).repeat(64).slice(0, 64))])),
      );
      assert.deepEqual(
        numbers.map((n) => n.get('w')).sort((a, b) => a! - b!),
        [1, 2, 3, 4, 5, 6, 7, 8],
        'each deploy got its own version',
      );
      const [record] = await writers[0]!.deployments('default', 'demo');
      assert.equal(record!.versions.length, 8);
      assert.equal(new Set(record!.versions.map((v) => v.bundleSha256)).size, 8, 'every deploy is recorded');
    } finally {
      await store.close();
    }
  });

  it('keeps a pause written while a deploy records its versions, and says not_found for an unknown app', async () => {
    const records = new DeploymentRecords(createMemoryStateStore());
    await records.addVersions('default', 'demo', [version('a'), version('b')]);
    await Promise.all([records.setStatus('default', 'demo', 'a', 'stopped'), records.addVersions('default', 'demo', [version('b')])]);
    const byName = new Map((await records.deployments('default', 'demo')).map((r) => [r.workload, r]));
    assert.equal(byName.get('a')!.status, 'stopped');
    assert.equal(byName.get('b')!.currentVersion, 2);
    await assert.rejects(records.setPaused('default', 'nope', true), (error: { code?: string }) => error.code === 'not_found');
  });

  it('reads a version recorded before images had requirementsFiles and env as an image with none', async () => {
    const store = createMemoryStateStore();
    const records = new DeploymentRecords(store);
    await records.addVersions('default', 'demo', [version('old')]);
    const key = 'deployments/default/demo/old';
    const stored = JSON.parse((await store.get(key))!.value.toString('utf8'));
    const { requirementsFiles: _files, env: _env, ...olderImage } = stored.versions[0].workload.image;
    stored.versions[0].workload.image = olderImage;
    await store.put(key, Buffer.from(JSON.stringify(stored)));
    const [record] = await records.deployments('default', 'demo');
    const image = record!.versions[0]!.workload.image;
    assert.deepEqual([image.requirementsFiles, image.env], [[], {}]);
    assert.equal(image.id, olderImage.id);
  });

  it('keeps workspaces apart and deletes an app with all its deployments', async () => {
    const records = new DeploymentRecords(createMemoryStateStore());
    await records.addVersions('default', 'demo', [version()]);
    await records.addVersions('other', 'demo', [version()]);
    assert.deepEqual(
      (await records.apps('default')).map((a) => `${a.workspace}/${a.name}`),
      ['default/demo'],
    );
    await records.deleteApp('default', 'demo');
    assert.equal(await records.app('default', 'demo'), null);
    assert.deepEqual(await records.deployments('default', 'demo'), []);
    assert.equal((await records.apps()).length, 1);
  });

  it("keeps an ASGI app's OpenAPI description beside its deployment (as large as a deploy keeps one), and deletes it with it", async () => {
    const store = await openFileStateStore({ dataDir: tempDir() });
    try {
      const records = new DeploymentRecords(store);
      await records.addVersions('default', 'shop', [version('web'), version('admin')]);
      // The largest document a deploy keeps still fits a state value (Consul's end at 512 KiB).
      const document = { openapi: '3.1.0', pad: 'x'.repeat(MAX_OPENAPI_BYTES - 40) };
      assert.ok(JSON.stringify(document).length <= MAX_OPENAPI_BYTES);
      await records.setApi('default', 'shop', 'web', {
        version: 1,
        source: '/openapi.json',
        capturedAt: '2026-11-27T00:00:00.000Z',
        document,
      });
      await records.setApi('default', 'shop', 'admin', {
        version: 1,
        source: '/openapi.json',
        capturedAt: '2026-11-27T00:00:00.000Z',
        document: { openapi: '3.0.0' },
      });
      const apis = await new DeploymentRecords(store).apis('default', 'shop');
      assert.deepEqual([...apis.keys()].sort(), ['admin', 'web']);
      assert.equal(apis.get('web')!.document.pad, document.pad);
      // Beside the deployments, not among them.
      assert.deepEqual((await records.deployments('default', 'shop')).map((r) => r.workload).sort(), ['admin', 'web']);
      await records.setApi('default', 'shop', 'admin', null);
      assert.deepEqual([...(await records.apis('default', 'shop')).keys()], ['web']);
      await records.deleteDeployment('default', 'shop', 'web');
      assert.equal((await records.apis('default', 'shop')).size, 0);
      await records.setApi('default', 'shop', 'admin', { version: 1, source: '/o', capturedAt: '2026-11-27T00:00:00.000Z', document: {} });
      await records.deleteApp('default', 'shop');
      assert.equal((await records.apis('default', 'shop')).size, 0);
    } finally {
      await store.close();
    }
  });
});
