/**
 * svc volumes and classes on real Nomad and Consul (opt-in: `npm run test:cluster`): a volume's folder
 * registered as a Nomad dynamic host volume on the node that sees svc's data dir, mounted by the exec
 * tasks of two apps (one writes, the other reads it read-only), found again by an allocation that
 * replaces a stopped one; and the model-class example, a class whose workers load their lexicon from a
 * mounted volume, called with `.remote`, `.map` and over HTTP. ACLs are on; svc holds only the policies
 * of config/policies/.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { examplesRoot, sdkPythonPath } from '../../core/model/paths.js';
import { until } from '../helpers/until.js';
import { clusterPython, NAMESPACE, type Cluster } from './agents.js';
import { useCluster } from './suite.js';
import { jobOf, runningAllocations } from './jobs.js';
import { SvcServer, deployTo } from './svc-process.js';
import { writeThroughApps } from './volume-apps.js';

describe('svc on real Nomad and Consul: volumes and classes', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  let server: SvcServer;
  const urls: Record<string, string> = {};
  const bearer = () => ({ Authorization: `Bearer ${server.ownerToken}` });

  const api = (method: string, at: string, body?: Buffer | string, type = 'application/json') =>
    fetch(`${server.url}/api/v1${at}`, {
      method,
      headers: { ...bearer(), ...(body === undefined ? {} : { 'Content-Type': type }) },
      ...(body === undefined ? {} : { body }),
    });
  const deploy = (target: string) => deployTo(server, target, urls);
  const jobIdOf = async (c: Cluster, app: string, workload: string) => (await jobOf(c, app, workload)).ID;
  const running = runningAllocations;
  const read = async () => (await fetch(urls['vol-reader/read']!, { headers: bearer() })).json();

  before(async () => {
    server = await SvcServer.serving((await cluster()).svcEnv());
  });
  after(async () => {
    await server?.stop();
  });

  it("two apps' exec tasks mount one volume, registered as a host volume on svc's node: one writes, the other reads it read-only", async () => {
    const c = await cluster();
    assert.equal((await api('POST', '/volumes', JSON.stringify({ name: 'shared' }))).status, 201);
    await writeThroughApps(server, urls, 'written on Nomad');
    const file = path.join(server.dataDir, 'volumes', 'default', 'shared', 'note.txt');
    assert.equal(readFileSync(file, 'utf8'), 'written on Nomad', "the write is in the volume's folder in svc's data dir");
    const seed = await fetch(urls['vol-writer/seed']!, { headers: bearer() });
    assert.equal(await seed.json(), 'seeded', 'start-up code reads the volume too');

    const volumes = (await c.nomadGet(`/v1/volumes?type=host&namespace=${NAMESPACE}`)) as { Name: string; State: string }[];
    assert.deepEqual(
      volumes.map((v) => [v.Name, v.State]),
      [['svc-default--shared', 'ready']],
      'one host volume, however many jobs mount it',
    );
    const job = await c.nomadGet(`/v1/job/${encodeURIComponent(await jobIdOf(c, 'vol-reader', 'read'))}?namespace=${NAMESPACE}`);
    assert.deepEqual(job.TaskGroups[0].Volumes['volume-0'].Source, 'svc-default--shared');
    assert.deepEqual(job.TaskGroups[0].Tasks[0].VolumeMounts[0].Destination, '/mnt/svc-test-ro');
  });

  it("an allocation that replaces a stopped one, on the volume's node, finds the files", async () => {
    const c = await cluster();
    const jobId = await jobIdOf(c, 'vol-reader', 'read');
    const [before] = await running(c, jobId);
    assert.ok(before, 'the reader runs');
    const stopped = await fetch(`${c.nomadUrl}/v1/allocation/${before.ID}/stop?namespace=${NAMESPACE}`, {
      method: 'POST',
      headers: { 'X-Nomad-Token': c.nomadRoot },
    });
    assert.equal(stopped.status, 200, await stopped.text());
    await until('a new allocation of the reader runs', async () => (await running(c, jobId)).some((a) => a.ID !== before.ID), {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    await until('the new allocation answers', async () => (await fetch(urls['vol-reader/read']!, { headers: bearer() })).ok, {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    assert.deepEqual(await read(), { text: 'written on Nomad', write: 'Read-only file system' });
  });

  it('refuses to delete the volume while the jobs mount it, naming them', async () => {
    const refused = await api('DELETE', '/volumes/shared');
    assert.equal(refused.status, 409);
    const body = (await refused.json()) as { error: { code: string; details: { users: string[] } } };
    assert.equal(body.error.code, 'volume_in_use');
    assert.deepEqual(body.error.details.users, ['vol-writer/write', 'vol-writer/seed', 'vol-reader/read']);
  });

  it('runs the model-class example: its workers load the lexicon from the mounted volume, for .remote, .map and HTTP', async () => {
    const c = await cluster();
    const folder = path.join(examplesRoot, 'model-class');
    // The script puts the lexicons into the volume, then calls the class: runs, on Nomad too.
    const ran = await promisify(execFile)(clusterPython, [path.join(folder, 'app.py')], {
      cwd: folder,
      env: { ...process.env, PYTHONPATH: sdkPythonPath, SVC_SERVER: server.url, SVC_TOKEN: server.ownerToken },
      timeout: 300_000,
    });
    assert.deepEqual(ran.stdout.split('\n').slice(0, 2), ['one: 2.5', 'map: [4.0, 0.5, -2.0, 0.0]']);
    assert.match(ran.stdout, /strict: \[2\.0, -0\.5, -3\.0, -2\.0\]/);
    await deploy(path.join(folder, 'app.py'));
    const rated = await fetch(urls['model-class/sentiment-rate']!, {
      method: 'POST',
      headers: { ...bearer(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'I love it' }),
    });
    assert.equal(rated.status, 200, await rated.clone().text());
    assert.deepEqual(await rated.json(), { lexicon: 'basic', score: 2, label: 'positive' });
    const job = await c.nomadGet(`/v1/job/${encodeURIComponent(await jobIdOf(c, 'model-class', 'sentiment-rate'))}?namespace=${NAMESPACE}`);
    assert.equal(job.TaskGroups[0].Volumes['volume-0'].Source, 'svc-default--lexicons');
    assert.equal(job.TaskGroups[0].Volumes['volume-0'].ReadOnly, true);
  });
});
