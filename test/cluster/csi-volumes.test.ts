/**
 * svc volumes as CSI volumes on real Nomad and Consul (opt-in: `npm run test:cluster`), with a real CSI
 * plugin: kubernetes-csi's csi-driver-host-path (`hostpathplugin`, from CSI_HOSTPATH_BIN or PATH; the
 * file is skipped, saying so, without it), run by Nomad as a monolith plugin job on raw_exec. svc runs
 * with `nomadCsiPlugin` naming it: `svc volume create` makes the CSI volume and its keeper, files go in
 * and out through the keeper, two apps' exec tasks mount the volume, a replaced allocation finds the
 * files, and a delete removes the volume from Nomad. ACLs are on; svc holds only config/policies/.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ApiClient } from '../../cli/api-client.js';
import { downloadFile } from '../../cli/transfer/download.js';
import { until } from '../helpers/until.js';
import { findBinary, NAMESPACE, type Cluster } from './agents.js';
import { jobOf, runningAllocations } from './jobs.js';
import { useCluster } from './suite.js';
import { SvcServer, svcCli } from './svc-process.js';
import { writeThroughApps } from './volume-apps.js';

const plugin = findBinary('CSI_HOSTPATH_BIN', 'hostpathplugin');
const PLUGIN_ID = 'hostpath';
/** The plugin's own creation parameters svc passes through (the hostpath plugin keeps them as the volume's context). */
const PARAMETERS = { 'example.com/tier': 'fast' };
/** Small, so that the volume's limit can be passed with a test upload. */
const VOLUME_MAX_BYTES = 32 * 1024 * 1024;
/** Room for one full volume and a half: a volume counted as full leaves the other 16 MiB. */
const WORKSPACE_VOLUME_BYTES = 48 * 1024 * 1024;

/** The plugin as Nomad runs CSI plugins: a job whose task serves the CSI socket Nomad names, as root (raw_exec). */
function pluginJob(c: Cluster, stateDir: string) {
  return {
    Job: {
      ID: 'csi-hostpath',
      Name: 'csi-hostpath',
      Type: 'system',
      Datacenters: ['dc1'],
      TaskGroups: [
        {
          Name: 'plugin',
          Tasks: [
            {
              Name: 'plugin',
              Driver: 'raw_exec',
              Config: {
                command: plugin,
                args: [
                  '--endpoint=${CSI_ENDPOINT}',
                  '--nodeid=${node.unique.name}',
                  `--statedir=${stateDir}`,
                  '--drivername=hostpath.csi.k8s.io',
                ],
              },
              CSIPluginConfig: {
                ID: PLUGIN_ID,
                Type: 'monolith',
                MountDir: '/csi',
                // raw_exec has no task root: the plugin must be told the host's paths of Nomad's staging folders.
                StagePublishBaseDir: path.join(c.nomadDataDir, 'client', 'csi', 'monolith', PLUGIN_ID),
              },
              Resources: { CPU: 100, MemoryMB: 128 },
            },
          ],
        },
      ],
    },
  };
}

(plugin === null ? describe.skip : describe)('svc on real Nomad and Consul: volumes as CSI volumes of a real plugin', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  let server: SvcServer;
  const urls: Record<string, string> = {};
  const bearer = () => ({ Authorization: `Bearer ${server.ownerToken}` });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'svc-csi-get-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));
  const api = (method: string, at: string, body?: Buffer | string | Readable, type = 'application/json') =>
    fetch(`${server.url}/api/v1${at}`, {
      method,
      headers: { ...bearer(), ...(body === undefined ? {} : { 'Content-Type': type }) },
      ...(body === undefined ? {} : { body: body as unknown as string, duplex: 'half' }),
    } as RequestInit);
  const root = async (c: Cluster, method: string, at: string, body?: unknown) => {
    const answer = await fetch(`${c.nomadUrl}${at}`, {
      method,
      headers: { 'X-Nomad-Token': c.nomadRoot },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await answer.text();
    return { status: answer.status, body: answer.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
  const keeperJob = 'svc--volume--default--shared';

  before(async () => {
    const c = await cluster();
    const registered = await root(c, 'PUT', '/v1/jobs', pluginJob(c, path.join(c.nomadDataDir, '..', 'csi-hostpath-state')));
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
    await until(
      'the CSI plugin is healthy',
      async () => {
        const found = await root(c, 'GET', `/v1/plugin/csi/${PLUGIN_ID}`);
        return found.status === 200 && found.body.ControllersHealthy > 0 && found.body.NodesHealthy > 0;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    server = await SvcServer.serving(
      c.svcEnv({
        SVC_NOMAD_CSI_PLUGIN: PLUGIN_ID,
        SVC_NOMAD_CSI_PARAMETERS: JSON.stringify(PARAMETERS),
        SVC_VOLUME_MAX_BYTES: String(VOLUME_MAX_BYTES),
        SVC_WORKSPACE_VOLUME_BYTES: String(WORKSPACE_VOLUME_BYTES),
      }),
    );
  });
  after(async () => {
    await server?.stop();
  });

  it('svc volume create makes a CSI volume of the plugin and starts its keeper', async () => {
    const c = await cluster();
    const created = await api('POST', '/volumes', JSON.stringify({ name: 'shared' }));
    assert.equal(created.status, 201, `${await created.text()}\n${server.output.slice(-3000)}`);
    const volume = await root(c, 'GET', `/v1/volume/csi/svc-default--shared?namespace=${NAMESPACE}`);
    assert.equal(volume.status, 200);
    assert.equal(volume.body.PluginID, PLUGIN_ID);
    assert.deepEqual(volume.body.Parameters, PARAMETERS, "the operator's nomadCsiParameters reach the plugin");
    assert.ok(volume.body.Schedulable, 'the plugin can attach it');
    assert.equal((await runningAllocations(c, keeperJob)).length, 1, 'the keeper runs');
  });

  it('puts, lists, gets (whole and a range) and removes files through the keeper; the same sha256 back', async () => {
    const data = randomBytes(5 * 1024 * 1024 + 123);
    // Streamed (chunked) from the client, as `svc volume put` of a large file.
    const body = Readable.from(
      (function* () {
        for (let at = 0; at < data.length; at += 256 * 1024) yield data.subarray(at, at + 256 * 1024);
      })(),
    );
    const put = await api('PUT', '/volumes/shared/files?path=weights/big.bin', body, 'application/octet-stream');
    assert.equal(put.status, 201, await put.clone().text());
    assert.equal(((await put.json()) as { entry: { size: number } }).entry.size, data.length);

    const listed = (await (await api('GET', '/volumes/shared/entries?path=&recursive=true')).json()) as {
      entries: { path: string; type: string; size: number }[];
    };
    assert.deepEqual(
      listed.entries.map((e) => [e.path, e.type, e.size]),
      [
        ['weights', 'dir', 0],
        ['weights/big.bin', 'file', data.length],
      ],
    );
    const whole = Buffer.from(await (await api('GET', '/volumes/shared/files?path=weights/big.bin')).arrayBuffer());
    assert.equal(createHash('sha256').update(whole).digest('hex'), createHash('sha256').update(data).digest('hex'));
    const ranged = await fetch(`${server.url}/api/v1/volumes/shared/files?path=weights/big.bin`, {
      headers: { ...bearer(), Range: 'bytes=1000-1999' },
    });
    assert.equal(ranged.status, 206);
    assert.deepEqual(Buffer.from(await ranged.arrayBuffer()), data.subarray(1000, 2000));
    // As `svc volume get` fetches a large file: in parts (of 1 MiB here, six), two at once, through the keeper.
    const fetched = path.join(scratch, 'big-in-parts.bin');
    await downloadFile(
      new ApiClient({ server: server.url, token: server.ownerToken }),
      '/api/v1/volumes/shared/files?path=weights/big.bin',
      fetched,
      {
        partBytes: 1024 * 1024,
        connections: 2,
      },
    );
    assert.equal(createHash('sha256').update(readFileSync(fetched)).digest('hex'), createHash('sha256').update(data).digest('hex'));

    const missing = await api('GET', '/volumes/shared/files?path=weights/none.bin');
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { error: { message: string } }).error.message, /has no file or folder "weights\/none.bin"/);
    assert.equal((await api('DELETE', '/volumes/shared/files?path=weights')).status, 400, 'a folder needs recursive');
    assert.equal((await api('DELETE', '/volumes/shared/files?path=weights&recursive=true')).status, 204);
    const volume = (await (await api('GET', '/volumes/shared')).json()) as { bytes: number };
    assert.equal(volume.bytes, 0);
  });

  it("refuses an upload past the volume's limit with volume_full (the keeper stops it), keeping nothing", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const upload = (mebibytes: number) =>
      Readable.from(
        (function* () {
          for (let i = 0; i < mebibytes; i++) yield chunk;
        })(),
      );
    assert.equal((await api('PUT', '/volumes/shared/files?path=first.bin', upload(20), 'application/octet-stream')).status, 201);
    // 20 of 32 MiB held: 16 more, sent without a length, pass the gateway's bound but not the volume's room.
    const put = await api('PUT', '/volumes/shared/files?path=too-big.bin', upload(16), 'application/octet-stream');
    assert.equal(put.status, 507, await put.clone().text());
    const error = ((await put.json()) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'volume_full');
    assert.match(error.message, /^the volume shared holds 20 MiB of at most 32 MiB;/);
    assert.equal((await api('DELETE', '/volumes/shared/files?path=first.bin')).status, 204);
    const listed = (await (await api('GET', '/volumes/shared/entries?path=')).json()) as { entries: unknown[] };
    assert.deepEqual(listed.entries, [], 'nothing of the refused upload is left');
  });

  it("two apps' exec tasks mount the CSI volume: one writes, the other reads read-only, and the keeper serves the write", async () => {
    const c = await cluster();
    await writeThroughApps(server, urls, 'written on a CSI volume');
    assert.equal(
      await (await api('GET', '/volumes/shared/files?path=note.txt')).text(),
      'written on a CSI volume',
      'the keeper serves the write',
    );
    const job = await c.nomadGet(`/v1/job/${encodeURIComponent((await jobOf(c, 'vol-reader', 'read')).ID)}?namespace=${NAMESPACE}`);
    assert.equal(job.TaskGroups[0].Volumes['volume-0'].Type, 'csi');
    assert.equal(job.TaskGroups[0].Volumes['volume-0'].Source, 'svc-default--shared');
    const volume = await root(c, 'GET', `/v1/volume/csi/svc-default--shared?namespace=${NAMESPACE}`);
    // Every claim is a writer's (one staging of the volume per node, which plugins like this one require); the
    // reader's task mounts it read-only, as its EROFS above shows.
    assert.equal(Object.keys(volume.body.WriteAllocs ?? {}).length, 4, 'the keeper, the two writer workloads and the reader');
    assert.equal(job.TaskGroups[0].Tasks[0].VolumeMounts[0].ReadOnly, true);
  });

  it('an allocation that replaces a stopped one finds the files', async () => {
    const c = await cluster();
    const jobId = (await jobOf(c, 'vol-reader', 'read')).ID;
    const [before] = await runningAllocations(c, jobId);
    assert.ok(before);
    assert.equal((await root(c, 'POST', `/v1/allocation/${before.ID}/stop?namespace=${NAMESPACE}`)).status, 200);
    await until(
      'a new allocation of the reader answers',
      async () => {
        if (!(await runningAllocations(c, jobId)).some((a) => a.ID !== before.ID)) return false;
        return (await fetch(urls['vol-reader/read']!, { headers: bearer() })).ok;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    assert.deepEqual(await (await fetch(urls['vol-reader/read']!, { headers: bearer() })).json(), {
      text: 'written on a CSI volume',
      write: 'Read-only file system',
    });
  });

  it('a keeper that went away is started again on the next use', async () => {
    const c = await cluster();
    const [keeper] = await runningAllocations(c, keeperJob);
    assert.ok(keeper);
    assert.equal((await root(c, 'POST', `/v1/allocation/${keeper.ID}/stop?namespace=${NAMESPACE}`)).status, 200);
    await until('the keeper allocation stopped', async () => !(await runningAllocations(c, keeperJob)).some((a) => a.ID === keeper.ID), {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    const listed = await api('GET', '/volumes/shared/entries?path=');
    assert.equal(listed.status, 200, await listed.clone().text());
    assert.deepEqual(
      ((await listed.json()) as { entries: { path: string }[] }).entries.map((e) => e.path),
      ['note.txt', 'seed.txt'],
    );
  });

  it('a keeper Nomad cannot place: create says why at once and leaves nothing; the list answers, its size unknown and why; uploads elsewhere count it as full', async () => {
    const c = await cluster();
    assert.equal((await api('POST', '/volumes', JSON.stringify({ name: 'other' }))).status, 201);
    const nodes = (await root(c, 'GET', '/v1/nodes')).body as { ID: string }[];
    const eligibility = (value: 'eligible' | 'ineligible') =>
      Promise.all(nodes.map((node) => root(c, 'PUT', `/v1/node/${node.ID}/eligibility`, { NodeID: node.ID, Eligibility: value })));
    await eligibility('ineligible');
    try {
      const started = Date.now();
      const created = await api('POST', '/volumes', JSON.stringify({ name: 'doomed' }));
      const refusal = (await created.json()) as { error: { code: string; message: string } };
      assert.equal(created.status, 500, JSON.stringify(refusal));
      assert.equal(refusal.error.code, 'container_failed');
      assert.match(refusal.error.message, /Nomad cannot place the keeper of the volume default\/doomed .*cannot be placed/);
      assert.ok(Date.now() - started < 60_000, 'said at once, not after the keeper start time-out');
      assert.equal((await api('GET', '/volumes/doomed')).status, 404);
      assert.equal((await root(c, 'GET', `/v1/volume/csi/svc-default--doomed?namespace=${NAMESPACE}`)).status, 404, 'no CSI volume left');
      assert.equal((await root(c, 'GET', `/v1/job/svc--volume--default--doomed?namespace=${NAMESPACE}`)).status, 404, 'no keeper job left');

      // The keeper of `shared` stops and cannot come back; a server started now has never read its size.
      const [keeper] = await runningAllocations(c, keeperJob);
      assert.ok(keeper);
      assert.equal((await root(c, 'POST', `/v1/allocation/${keeper.ID}/stop?namespace=${NAMESPACE}`)).status, 200);
      await until('the keeper allocation stopped', async () => (await runningAllocations(c, keeperJob)).length === 0, {
        timeoutMs: 60_000,
        intervalMs: 250,
      });
      await server.stop();
      server.start();
      await server.ready();
      const listed = await api('GET', '/volumes');
      const { volumes } = (await listed.json()) as { volumes: { name: string; bytes: number | null; bytesError?: string }[] };
      assert.equal(listed.status, 200);
      const shared = volumes.find((v) => v.name === 'shared');
      assert.equal(shared?.bytes, null, JSON.stringify(volumes));
      assert.match(shared.bytesError ?? '', /Nomad cannot place the keeper of the volume default\/shared/);
      const cli = await svcCli(server, ['volume', 'list']);
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(cli.stdout, /^shared +\? +of 32 MiB/m);
      assert.match(cli.stderr, /the size of shared is unknown now: Nomad cannot place the keeper/);

      // Another volume's uploads go on, with shared counted at its limit against the workspace's.
      const mebibytes = (count: number) => Buffer.alloc(count * 1024 * 1024, 1);
      const refused = await api('PUT', '/volumes/other/files?path=big.bin', mebibytes(20), 'application/octet-stream');
      assert.equal(refused.status, 507, await refused.clone().text());
      assert.match(
        ((await refused.json()) as { error: { message: string } }).error.message,
        /^the volumes of default hold 32 MiB of at most 48 MiB together \(counting shared at 32 MiB each: their size cannot be read now\); 20 MiB more do not fit\.$/,
      );
      const taken = await api('PUT', '/volumes/other/files?path=small.bin', mebibytes(1), 'application/octet-stream');
      assert.equal(taken.status, 201, await taken.text());
    } finally {
      await eligibility('eligible');
    }
    await until(
      "the keeper is placed again and the volume's size read",
      async () => {
        const { volumes } = (await (await api('GET', '/volumes')).json()) as { volumes: { name: string; bytes: number | null }[] };
        return volumes.find((v) => v.name === 'shared')?.bytes !== null;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    assert.equal((await api('DELETE', '/volumes/other')).status, 204);
  });

  it('deletes the volume once nothing mounts it: the CSI volume and the keeper are gone from Nomad', async () => {
    const c = await cluster();
    assert.equal((await api('DELETE', '/volumes/shared')).status, 409, 'still mounted');
    for (const app of ['vol-writer', 'vol-reader']) {
      const ran = await svcCli(server, ['app', 'delete', app, '--yes']);
      assert.equal(ran.code, 0, `${ran.stdout}\n${ran.stderr}`);
    }
    const deleted = await api('DELETE', '/volumes/shared');
    assert.equal(deleted.status, 204, await deleted.text());
    assert.equal((await root(c, 'GET', `/v1/volume/csi/svc-default--shared?namespace=${NAMESPACE}`)).status, 404);
    assert.equal((await root(c, 'GET', `/v1/job/${keeperJob}?namespace=${NAMESPACE}`)).status, 404);
  });
});
