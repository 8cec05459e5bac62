/**
 * Two svc replicas share the work (stand-ins): the leader publishes its route
 * table to Consul KV and the follower copies it, so the follower serves the
 * workload URLs itself (instances from the Consul registry) and forwards the
 * API to the leader; its load reaches the leader's autoscaler through Consul
 * KV, so a request that arrives at the follower scales a workload from zero
 * and keeps its container up while it runs.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createBundle } from '../../core/infra/bundles/create.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient } from '../core/http/api/client.js';
import { tempDir } from '../helpers/config.js';
import { upload } from './api-lifecycle-helpers.js';
import { CLUSTER_APP, getJson, startStandins, svcJobs, type Standins } from './cluster-helpers.js';
import { until } from '../helpers/until.js';

describe('svc replicas on Nomad and Consul share the work (stand-ins)', function () {
  this.timeout(180_000);
  let standins: Standins;
  let leader: Platform | undefined;
  let follower: Platform | undefined;
  const reports: unknown[] = [];
  let urls: Record<string, string> = {};

  before(async () => {
    standins = await startStandins();
  });
  after(async () => {
    await follower?.close();
    await leader?.close();
    await standins?.close();
  });

  /** The same URL on the follower. */
  const viaFollower = (url: string) => url.replace(new URL(url).origin, follower!.url);

  it("a follower copies the leader's routes, is ready, and forwards the API to the leader (uploads included)", async () => {
    const dataDir = tempDir('svc-shared-data-');
    leader = await startPlatform({ config: standins.config({ dataDir }), report: (error) => reports.push(error) });
    await until('the first replica leads', () => leader!.role === 'ready');
    follower = await startPlatform({ config: standins.config({ dataDir }), report: (error) => reports.push(error) });
    await until('the second replica follows', () => follower!.role === 'following');
    assert.deepEqual(await getJson(`${follower.url}/_svc/ready`).then((r) => [r.status, r.body]), [
      200,
      { status: 'following', routes: 'current', outages: {} },
    ]);
    assert.equal(follower.leader?.leaderAddress(), leader.url, "it reads the leader's address from the lock key");

    // The whole deploy goes through the follower: the bundle upload streams through to the leader.
    const token = leader.ownerToken.secret;
    const manifest = await loadManifest({ target: path.join(CLUSTER_APP, 'app.py') });
    const bundle = await createBundle(CLUSTER_APP, { out: path.join(tempDir('svc-bundle-'), 'bundle.tar.gz') });
    const uploaded = await upload(follower.url, token, await readFile(bundle.path), bundle.sha256);
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.json));
    const deployed = await apiClient(follower.url)('POST', '/api/v1/apps/cluster/deployments', {
      token,
      json: { manifest: manifest.raw, bundle: bundle.sha256 },
    });
    assert.equal(deployed.status, 201, deployed.text);
    urls = Object.fromEntries(
      deployed.json.deployments.map((d: { workload: string; urls: { path: string } }) => [d.workload, d.urls.path]),
    );
    assert.equal(leader.deployments.list().length, 1, 'the leader made the deployment');

    const whoami = await getJson(`${follower.url}/api/v1/whoami`, token);
    assert.equal(whoami.status, 200, JSON.stringify(whoami.body));
    const missing = await getJson(`${follower.url}/api/v1/apps/nope`, token);
    assert.deepEqual([missing.status, missing.body.error.code], [404, 'not_found'], "the leader's errors come back as they are");
    assert.deepEqual(reports, []);
  });

  it("serves a workload URL on the follower itself, from the Consul registry's instances", async () => {
    const unit = unitOf(leader!, 'hello');
    await until(
      'the follower has the route and the instances',
      () => follower!.role === 'following' && follower!.registry.instances(unit).length > 0,
    );
    // Marked as already forwarded: a follower that sent it on to the leader would answer 503 not_leader instead.
    const headers = { 'X-Svc-Forwarded-By': 'http://test' };
    const answer = await fetch(viaFollower(urls.hello!), { headers });
    const body = (await answer.json()) as { hello?: string; job?: string };
    assert.equal(answer.status, 200, JSON.stringify(body));
    assert.equal(body.hello, 'cluster');
    assert.ok((await svcJobs(standins.nomad)).some((job) => job.ID === body.job));
    const api = await fetch(`${follower!.url}/api/v1/whoami`, {
      headers: { ...headers, Authorization: `Bearer ${leader!.ownerToken.secret}` },
    });
    assert.equal(api.status, 503, 'the same mark on an API request: not forwarded twice');
    assert.deepEqual(reports, []);
  });

  it('a request at the follower scales a workload from zero on the leader, which keeps the container while it runs past keep_warm', async () => {
    const slow = unitOf(leader!, 'slow');
    await until('slow is at zero containers', () => (leader!.autoscaler.status(slow)?.containers.length ?? -1) === 0);
    // 5 s in flight on the follower, keep_warm 2 s: only the follower's load report keeps the container up.
    const started = Date.now();
    const answer = await getJson(`${viaFollower(urls.slow!)}?seconds=5`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.ok(Date.now() - started >= 5000);
    const jobs = await svcJobs(standins.nomad);
    assert.ok(
      jobs.some((job) => job.ID === answer.body.job),
      "served by the leader's Nomad job",
    );
    // Afterwards the leader sees it idle (the report's last activity) and scales it down after keep_warm.
    await until('slow is scaled back to zero', () => leader!.autoscaler.status(slow)?.containers.length === 0, 30_000);
    assert.deepEqual(reports, []);
  });

  it('a route the leader removes disappears from the follower', async () => {
    const token = leader!.ownerToken.secret;
    const deleted = await apiClient(follower!.url)('DELETE', '/api/v1/apps/cluster', { token });
    assert.ok(deleted.status === 200 || deleted.status === 204, deleted.text);
    // Unknown URLs need a token first (they reveal nothing to strangers), as on the leader.
    const headers = { Authorization: `Bearer ${token}` };
    await until('the follower answers 404', async () => (await fetch(viaFollower(urls.hello!), { headers })).status === 404);
    assert.deepEqual(reports, []);
  });
});

function unitOf(platform: Platform, workload: string): string {
  const deployment = platform.deployments.list().find((d) => d.workloads.some((w) => w.name === workload));
  const unit = deployment?.workloads.find((w) => w.name === workload)?.unit;
  assert.ok(unit, `no unit for ${workload}`);
  return unit;
}
