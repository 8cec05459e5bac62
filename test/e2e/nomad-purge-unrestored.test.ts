/**
 * After a failover the new leader purges the jobs it does not run, but not
 * those of a workload it could not start again (its bundle is not in this
 * replica's data dir, an image build failed): the previous leader's job is
 * what still serves it (Fabio/Traefik route to its containers directly).
 */
import assert from 'node:assert/strict';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { tempDir } from '../helpers/config.js';
import { deployClusterApp, getJson, startStandins, svcJobs, type Standins } from './cluster-helpers.js';
import { until } from '../helpers/until.js';

describe('the purge after a restore that failed (stand-ins)', function () {
  this.timeout(180_000);
  let standins: Standins;
  let first: Platform | undefined;
  let second: Platform | undefined;

  before(async () => {
    standins = await startStandins();
  });
  after(async () => {
    await first?.close({ keepWorkloads: false });
    await second?.close({ keepWorkloads: false });
    await standins?.close();
  });

  it('keeps the running jobs of a deployment the new leader could not restore', async () => {
    first = await startPlatform({ config: standins.config({ dataDir: tempDir('svc-one-') }) });
    await until('the first replica leads', () => first!.role === 'ready');
    await deployClusterApp(first);
    const jobs = (await svcJobs(standins.nomad)).map((job) => job.ID).sort();
    assert.equal(jobs.length, 2);

    // The second replica has its own data dir (the svc job's default): the bundle is not there.
    const reports: unknown[] = [];
    second = await startPlatform({ config: standins.config({ dataDir: tempDir('svc-two-') }), report: (error) => reports.push(error) });
    await first.close(); // a restart / rolling update: the jobs keep running
    first = undefined;
    await until('the second replica leads and has tried to restore', () => second!.role === 'ready', 60_000);
    assert.ok(
      reports.some((error) => /no bundle/.test(String((error as Error).message))),
      `the restore failed: ${reports.map(String).join('; ')}`,
    );
    const app = await getJson(`${second.url}/api/v1/apps/cluster`, second.ownerToken.secret);
    assert.ok(app.status === 200, JSON.stringify(app.body));

    const left = (await svcJobs(standins.nomad)).map((job) => job.ID).sort();
    assert.deepEqual(left, jobs, 'the only jobs running the app, which the new leader could not replace, were purged');
  });
});
