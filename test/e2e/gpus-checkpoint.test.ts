import assert from 'node:assert/strict';
import path from 'node:path';
import type { ContainerView } from '../../core/http/api/containers.js';
import type { LogLine } from '../../core/infra/scheduler/types.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import type { Deployment } from '../../core/services/deployments/types.js';
import { gpuColumn } from '../../cli/commands/container.js';
import { testConfig } from '../helpers/config.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { until } from '../helpers/until.js';
import { deployRequest } from './lifecycle-helpers.js';

const UUID = 'GPU-5c1a0b7e-2f3d-4c4e-9a1b-0e7d3f2a6b11';
type Answer = { pid: number; ppid: number; cuda: string; nvidia: string; model: string; warmed: { loaded_in: number; cuda_then?: string } };

/**
 * Waiting for a GPU made visible, and checkpoints with GPUs, on the embedded platform with real
 * containers and an inventory of ONE L4 read from a file (this machine has no GPU: CUDA itself is
 * not met, only the environment each container is given). A checkpointed gpu="any" endpoint: its
 * containers fork from the template (which saw no GPU) and each gets its GPU's variables; while
 * one holds the GPU busy, a second waits, and the 429 and 503 its requests get, the container
 * list and /metrics say why. A template whose on_start touched CUDA (a stand-in torch) is refused.
 */
describe('GPUs: waiting made visible, and checkpoints (inventory of one GPU from a file)', function () {
  this.timeout(90_000);
  let platform: Platform;
  let deployment: Deployment;
  const lines: LogLine[] = [];
  const logged = (pattern: RegExp) => lines.filter((line) => pattern.test(line.text));
  const api = (route: string) => fetch(`${platform.url}${route}`, { headers: { Authorization: `Bearer ${platform.ownerToken.secret}` } });

  async function deploy(target: string): Promise<Deployment> {
    const manifest = await loadManifest({ target });
    return platform.deployments.deploy(deployRequest(manifest));
  }

  before(async () => {
    const gpuInventory = path.join(packageRoot, 'test', 'fixtures', 'gpu-inventory-one.csv');
    platform = await startPlatform({ config: testConfig({ gpuInventory, queueTimeoutSeconds: 2 }), logs: (line) => lines.push(line) });
    deployment = await deploy(path.join(packageRoot, 'test', 'fixtures', 'apps', 'gpus_checkpoint.py'));
  });
  after(async () => platform?.close());

  it('forks a GPU container from the checkpoint template, which saw no GPU, and gives it its own', async () => {
    const answer = await fetch(deployment.workloads[0]!.url!);
    assert.equal(answer.status, 200);
    const body = (await answer.json()) as Answer;
    assert.deepEqual([body.cuda, body.nvidia, body.model], [UUID, UUID, 'L4']);
    assert.ok(![body.pid, body.ppid].includes(body.warmed.loaded_in), 'on_start ran in the template, not the container');
    assert.equal(body.warmed.cuda_then, '', 'the template is shown no GPU');
    assert.ok(logged(/^container c-\w+ forked from checkpoint template t-\w+/).length > 0);
  });

  it('says why a container waits for the GPU: in the 429 and the 503, the container list, the dashboard and /metrics', async () => {
    const url = deployment.workloads[0]!.url!;
    const unit = deployment.workloads[0]!.unit!;
    const busy = fetch(`${url}?seconds=4`);
    await until('a container serves the long request', () => (platform.autoscaler.status(unit)?.inFlight ?? 0) > 0, { timeoutMs: 20_000 });
    const holder = platform.autoscaler.status(unit)!.containers.find((c) => c.gpu?.state === 'held')!.id;
    const queued = fetch(url);
    await until('a second container waits for the GPU', () => logged(/waits for a GPU \(gpu any\): held by container/).length > 0, {
      timeoutMs: 10_000,
    });
    const reason = `waiting for a GPU (gpu any): 1 of 1 L4 busy (held by container ${holder})`;

    const full = await fetch(url);
    assert.equal(full.status, 429);
    const refused = (await full.json()) as { error: { code: string; message: string } };
    assert.equal(refused.error.code, 'queue_full');
    assert.ok(refused.error.message.endsWith(`; its container is ${reason}.`), refused.error.message);

    const { containers } = (await (await api('/api/v1/containers?app=gpuckpt')).json()) as { containers: ContainerView[] };
    assert.deepEqual(containers.map((c) => gpuColumn(c.gpu)).sort(), ['L4×1', 'waiting (any)']);
    const { secret } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, DEFAULT_WORKSPACE);
    const page = await (
      await fetch(`${platform.url}/dashboard/apps/gpuckpt/workloads/which`, { headers: { Cookie: `svc_session=${secret}` } })
    ).text();
    assert.ok(page.includes(`<dt>GPUs now</dt><dd>${holder}: L4×1; a container is ${reason}</dd>`), page);
    const metrics = await (await api('/metrics')).text();
    assert.match(metrics, /^svc_gpus\{model="L4",state="busy"\} 1$/m);
    assert.match(metrics, /^svc_gpu_waiting_containers\{workspace="default",app="gpuckpt",workload="which",stage="deployed"\} 1$/m);

    const timedOut = await queued;
    assert.equal(timedOut.status, 503);
    assert.equal(timedOut.headers.get('retry-after'), '5');
    const starting = (await timedOut.json()) as { error: { code: string; message: string } };
    assert.equal(starting.error.code, 'starting');
    assert.equal(starting.error.message, `this workload's container is ${reason}; the request waited for 2 s in its queue.`);
    assert.equal((await busy).status, 200);

    // keep_warm 1: the holder stops idle and gives the GPU back; the waiting container takes it and forks from the template.
    const waiting = logged(/waits for a GPU/)[0]!.container;
    await until('the waiting container gets the GPU', () => logged(/gets GPU 0/).some((line) => line.container === waiting), {
      timeoutMs: 20_000,
    });
    await until('and forks from the template', () => logged(/forked from checkpoint template/).some((line) => line.container === waiting), {
      timeoutMs: 20_000,
    });
  });

  it('refuses a checkpoint template that touched CUDA before forking, and starts its containers without it', async () => {
    await platform.deployments.remove(deployment.ref);
    const touched = await deploy(path.join(packageRoot, 'test', 'fixtures', 'gpu-cuda-touched', 'app.py'));
    assert.equal(
      logged(/^cudatouched|which: the checkpoint template touched CUDA before forking \(torch\.cuda\.is_initialized\(\) is True\)/).length,
      1,
    );
    assert.equal(
      logged(/checkpoint template of which cannot be used \(it exited with code 7\)/).length,
      1,
      lines.map((l) => l.text).join('\n'),
    );
    const answer = await fetch(touched.workloads[0]!.url!);
    const body = (await answer.json()) as Answer;
    assert.equal(answer.status, 200);
    assert.equal(body.cuda, UUID);
    assert.ok([body.pid, body.ppid].includes(body.warmed.loaded_in), 'on_start ran in the container itself');
  });
});
