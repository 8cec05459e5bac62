/**
 * A leader purges the jobs it does not run only within its own installation
 * (`Meta.svc_install`: its Consul KV prefix, or its machine and data dir):
 * two svc installations sharing a Nomad namespace (apart by `consulPrefix`)
 * never purge each other's jobs, and `svc serve` (state: memory) purges none.
 */
import assert from 'node:assert/strict';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { tempDir } from '../helpers/config.js';
import { deployClusterApp, getJson, startStandins, svcJobs, type Standins } from './cluster-helpers.js';
import { until } from '../helpers/until.js';

describe('purging Nomad jobs stays within one svc installation (stand-ins)', function () {
  this.timeout(180_000);
  let standins: Standins;
  let a: Platform | undefined;
  let b: Platform | undefined;

  before(async () => {
    standins = await startStandins();
  });
  after(async () => {
    await a?.close({ keepWorkloads: false });
    await b?.close({ keepWorkloads: false });
    await standins?.close();
  });

  it("starting installation B leaves installation A's running jobs alone", async () => {
    a = await startPlatform({ config: standins.config({ dataDir: tempDir('svc-a-'), consulPrefix: 'svc-a/' }) });
    await until('installation A leads', () => a!.role === 'ready');
    const { urls } = await deployClusterApp(a);
    const aJobs = (await svcJobs(standins.nomad)).map((job) => job.ID).sort();
    assert.equal(aJobs.length, 2, aJobs.join(', '));
    assert.equal((await getJson(urls.hello!)).status, 200);

    // Another installation (its own KV prefix, its own leader lock), same Nomad namespace.
    b = await startPlatform({ config: standins.config({ dataDir: tempDir('svc-b-'), consulPrefix: 'svc-b/' }) });
    await until('installation B leads its own state and has restored (nothing)', () => b!.role === 'ready');

    const left = (await svcJobs(standins.nomad)).map((job) => job.ID).sort();
    assert.deepEqual(left, aJobs, "B purged A's jobs, which A's deployments still run");
  });

  it("a `svc serve`-style platform (state: 'memory', no election) on the same cluster leaves the server's jobs alone", async () => {
    await b?.close({ keepWorkloads: false });
    b = undefined;
    // Installation A deploys (again, if the first case purged its jobs).
    await deployClusterApp(a!);
    const aJobs = (await svcJobs(standins.nomad)).map((job) => job.ID).sort();
    assert.ok(aJobs.length >= 2, aJobs.join(', '));
    // What cli/serve/embedded.ts starts: no state, so no leader election; a config (or SVC_SCHEDULER) says nomad.
    const serve = await startPlatform({ config: standins.config({ dataDir: tempDir('svc-serve-') }), state: 'memory' });
    try {
      const left = (await svcJobs(standins.nomad)).map((job) => job.ID).sort();
      assert.deepEqual(left, aJobs, "a dev preview platform purged the server's running jobs");
    } finally {
      await serve.close({ keepWorkloads: false });
    }
  });
});
