import assert from 'node:assert/strict';
import path from 'node:path';
import type { LogLine } from '../../core/infra/scheduler/types.js';
import { packageRoot } from '../../core/model/paths.js';
import type { SvcError } from '../../core/model/errors.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import type { Deployment } from '../../core/services/deployments/types.js';
import { testConfig } from '../helpers/config.js';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { until } from '../helpers/until.js';
import { deployRequest } from './lifecycle-helpers.js';
import { appCalls } from '../../cli/commands/app-calls.js';
import { capture } from '../cli/fixture.js';

const UUIDS = ['GPU-5c1a0b7e-2f3d-4c4e-9a1b-0e7d3f2a6b11', 'GPU-8f2e4d6c-1a3b-4c5d-8e7f-9a0b1c2d3e4f'];

/**
 * GPUs on the embedded platform, with real containers and an inventory of two L4s read from a
 * file (SVC_GPU_INVENTORY: this machine has no GPU). A `gpu="any"` endpoint with max_containers 3:
 * two containers get one GPU each, read back from their environment; the third waits while both
 * are held and starts once one is given back. A deploy asking for an H100 is refused.
 */
describe('GPUs on the embedded platform (inventory from a file)', function () {
  this.timeout(60_000);
  let platform: Platform;
  let manifest: LoadedManifest;
  let deployment: Deployment;
  const lines: LogLine[] = [];
  const logged = (pattern: RegExp) => lines.filter((line) => pattern.test(line.text));

  before(async () => {
    manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', 'gpus.py') });
    const gpuInventory = path.join(packageRoot, 'test', 'fixtures', 'gpu-inventory.csv');
    platform = await startPlatform({ config: testConfig({ gpuInventory }), logs: (line) => lines.push(line) });
    deployment = await platform.deployments.deploy(deployRequest(manifest));
  });
  after(async () => platform?.close());

  it('says what it found at start', () => {
    assert.equal(logged(/^GPUs: 2 from SVC_GPU_INVENTORY .*gpu-inventory\.csv: 0: L4 \(NVIDIA L4, 23034 MiB\); 1: L4/).length, 1);
  });

  it('gives two containers one GPU each, the third waits until one is given back', async () => {
    const url = `${deployment.workloads[0]!.url}?seconds=3`;
    type Env = { cuda: string; nvidia: string; model: string };
    const unit = deployment.workloads[0]!.unit!;
    const containers = () => platform.autoscaler.status(unit)?.containers ?? [];
    // keep_warm 0: the deploy's container stops once idle. A burst while it stops would find its GPU
    // held by a container already gone from the list: start from none.
    await until("the deploy's container stopped", () => containers().length === 0, { timeoutMs: 20_000 });
    const answers = Promise.all([0, 1, 2].map(() => fetch(url).then(async (r) => ({ status: r.status, body: (await r.json()) as Env }))));
    await until('a third container waits for a GPU', () => logged(/waits for a GPU \(gpu any\): held by container c-/).length > 0, {
      timeoutMs: 20_000,
    });
    const waiting = logged(/waits for a GPU/)[0]!.container;
    assert.equal(containers().length, 3);
    assert.equal(containers().find((c) => c.id === waiting)?.state, 'starting');
    const running = new Set(containers().map((c) => c.id));
    const got = logged(/^container c-\w+ gets GPU \d \(GPU-[\w-]+\): L4$/)
      .filter((line) => running.has(line.container))
      .map((line) => /\(([^)]+)\)/.exec(line.text)![1]);
    assert.deepEqual([...got].sort(), UUIDS, 'two containers, two different GPUs');

    const served = await answers;
    for (const { status, body } of served) {
      assert.equal(status, 200);
      assert.ok(UUIDS.includes(body.cuda), body.cuda);
      assert.equal(body.nvidia, body.cuda);
      assert.equal(body.model, 'L4');
    }
    assert.equal(new Set(served.map((answer) => answer.body.cuda)).size, 2, 'both GPUs served');
    // Idle (keep_warm 0), a container stops and gives its GPU back: the waiting one takes it and starts.
    await until('the waiting container gets a GPU', () => logged(/gets GPU/).some((line) => line.container === waiting), {
      timeoutMs: 20_000,
    });
  });

  it('counts the GPU-seconds its containers held in svc usage', async () => {
    const unit = deployment.workloads[0]!.unit!;
    const healthy = () => platform.autoscaler.status(unit)?.containers.filter((c) => c.state === 'healthy').length ?? 0;
    const busy = fetch(`${deployment.workloads[0]!.url}?seconds=3`);
    await until('a container holds a GPU', async () => healthy() > 0, { timeoutMs: 20_000, intervalMs: 50 });
    await platform.usage.sample();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await platform.usage.sample();
    const held = healthy();
    await busy;
    const answer = await fetch(`${platform.url}/api/v1/usage?since=24h`, {
      headers: { Authorization: `Bearer ${platform.ownerToken.secret}` },
    });
    const { rows } = (await answer.json()) as { rows: { key: string; gpuSeconds: number }[] };
    const row = rows.find((r) => r.key === `${manifest.spec.name}/${deployment.workloads[0]!.name}`);
    assert.ok(
      row !== undefined && row.gpuSeconds >= held * 0.9,
      `${held} containers, one GPU each, about a second: ${JSON.stringify(row)}`,
    );
  });

  it("carries gpu in the app's interface, which the typed exports read", async () => {
    const answer = await fetch(`${platform.url}/api/v1/apps/${manifest.spec.name}/interface`, {
      headers: { Authorization: `Bearer ${platform.ownerToken.secret}` },
    });
    const { workloads } = (await answer.json()) as { workloads: { name: string; gpu?: unknown }[] };
    assert.deepEqual(workloads.find((w) => w.name === deployment.workloads[0]!.name)?.gpu, { models: ['any'], count: 1 });
  });

  it('refuses a deploy asking for a GPU the platform does not have, listing the GPUs it has', async () => {
    const [workload] = manifest.spec.workloads;
    const spec = {
      ...manifest.spec,
      workloads: [{ ...workload!, resources: { ...workload!.resources, gpu: { models: ['H100'], count: 1 } } }],
    };
    await assert.rejects(
      platform.deployments.deploy({
        spec,
        source: { root: manifest.root, entry: spec.entry },
        workspace: DEFAULT_WORKSPACE,
        stage: 'deployed',
        principal: null,
      }),
      (error: SvcError) => {
        assert.equal(error.code, 'gpu_unavailable');
        assert.equal(
          error.message,
          `the workload which asks for gpu H100, but this platform has no H100. Its GPUs: 0: L4 (NVIDIA L4, 23034 MiB); 1: L4 (NVIDIA L4, 23034 MiB).`,
        );
        return true;
      },
    );
  });
});

/**
 * A spawned call whose function's containers wait for a GPU says so where a user looks: the calls
 * API (`waiting`), `svc app calls` (a line under the table) and the call's dashboard page. One L4
 * from a file; a function with gpu="L4" and two containers at most: the second call's container
 * waits while the first holds the GPU.
 */
describe('spawned calls waiting for a GPU (inventory from a file)', function () {
  this.timeout(60_000);
  let platform: Platform;
  let owner: string;
  const get = async (route: string) => {
    const answer = await fetch(`${platform.url}/api/v1${route}`, { headers: { Authorization: `Bearer ${owner}` } });
    assert.equal(answer.status, 200, route);
    return answer.json() as Promise<{ calls: { id: string; status: string; waiting?: string }[] }>;
  };

  before(async () => {
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', 'gpu_calls.py') });
    const gpuInventory = path.join(packageRoot, 'test', 'fixtures', 'gpu-inventory-one.csv');
    platform = await startPlatform({ config: testConfig({ gpuInventory }) });
    owner = platform.ownerToken.secret;
    await platform.deployments.deploy(deployRequest(manifest));
  });
  after(async () => platform?.close());

  it('names the GPU it waits for, who holds it and its place, in the API, svc app calls and the dashboard; then runs', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const spawned = await fetch(`${platform.url}/api/v1/apps/gpu-calls/functions/hold/calls`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${owner}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ seconds: 3 }),
      });
      assert.equal(spawned.status, 202);
      ids.push(((await spawned.json()) as { call_id: string }).call_id);
    }
    let waiting: { id: string; waiting?: string } | undefined;
    await until(
      'a call waits for the GPU',
      async () => (waiting = (await get('/apps/gpu-calls/calls')).calls.find((c) => c.waiting !== undefined)) !== undefined,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    // The first call's container may hold the GPU, or (on a busy machine) the deploy's one still, both calls waiting.
    assert.match(
      waiting!.waiting!,
      /^waiting for a GPU \(gpu L4\): 1 of 1 L4 busy \(held by container c-\w+\); (first of its calls in the queue|1 of its calls waits ahead of it)$/,
    );
    assert.ok(ids.includes(waiting!.id));
    const one = (await (
      await fetch(`${platform.url}/api/v1/calls/${waiting!.id}`, { headers: { Authorization: `Bearer ${owner}` } })
    ).json()) as {
      call: { waiting?: string };
    };
    // Read a moment later: its place may have moved up meanwhile (the call ahead of it started).
    assert.match(one.call.waiting ?? '', /^waiting for a GPU \(gpu L4\): 1 of 1 L4 busy \(held by container c-\w+\); /);

    const cli = capture({ env: { SVC_SERVER: platform.url, SVC_TOKEN: owner } });
    await appCalls(cli.context, 'gpu-calls');
    assert.match(cli.stdout(), new RegExp(`^${waiting!.id} waits: waiting for a GPU \\(gpu L4\\): 1 of 1 L4 busy`, 'm'));

    const { secret } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, DEFAULT_WORKSPACE);
    const page = await (
      await fetch(`${platform.url}/dashboard/apps/gpu-calls/calls/${waiting!.id}`, { headers: { Cookie: `svc_session=${secret}` } })
    ).text();
    assert.match(page, /<dd id="call-waiting">waiting for a GPU \(gpu L4\): 1 of 1 L4 busy/);

    // The first call ends and its container gives the GPU back: the waiting call runs, and says nothing more.
    await until('both calls succeed', async () => (await get('/apps/gpu-calls/calls')).calls.every((c) => c.status === 'succeeded'), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    assert.equal((await get('/apps/gpu-calls/calls')).calls.filter((c) => c.waiting !== undefined).length, 0);
  });
});

/**
 * A workspace quota of GPUs (`workspaceQuotas`: one GPU) on two L4s from a file: the deploy of a GPU
 * endpoint fits and counts its GPU; a second app's GPU container would pass the quota and is refused
 * with quota_exceeded naming GPUs, nothing started.
 */
describe('a workspace quota of GPUs (inventory from a file)', function () {
  this.timeout(60_000);
  let platform: Platform;
  let manifest: LoadedManifest;

  before(async () => {
    manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', 'gpus.py') });
    const gpuInventory = path.join(packageRoot, 'test', 'fixtures', 'gpu-inventory.csv');
    platform = await startPlatform({ config: testConfig({ gpuInventory, workspaceQuotas: { '*': { gpus: 1 } } }) });
  });
  after(async () => platform?.close());

  it('counts the GPUs containers hold, and refuses a deploy past the quota naming GPUs', async () => {
    const deployed = await platform.deployments.deploy(deployRequest(manifest));
    // keep_warm 0: a request keeps the container (and its GPU) while the quota is read.
    const busy = fetch(`${deployed.workloads[0]!.url}?seconds=2`);
    const quota = async () =>
      (await (
        await fetch(`${platform.url}/api/v1/workspace/quota`, { headers: { Authorization: `Bearer ${platform.ownerToken.secret}` } })
      ).json()) as {
        quota: { gpus: number };
        inUse: { gpus: number };
      };
    await until('the container holds its GPU', async () => (await quota()).inUse.gpus === 1, { timeoutMs: 20_000, intervalMs: 50 });
    assert.equal((await quota()).quota.gpus, 1);

    const spec = { ...manifest.spec, name: 'gpus-two', workloads: manifest.spec.workloads.map((w) => ({ ...w, app: 'gpus-two' })) };
    await assert.rejects(platform.deployments.deploy({ ...deployRequest(manifest), spec }), (error: SvcError) => {
      assert.equal(error.code, 'quota_exceeded');
      assert.equal(error.message, 'the workspace default may run 1 of GPUs at once; 1 run and this needs 1 more.');
      return true;
    });
    assert.equal(platform.deployments.get({ workspace: DEFAULT_WORKSPACE, app: 'gpus-two', stage: 'deployed' }), null, 'nothing deployed');
    assert.equal((await busy).status, 200);
  });
});
