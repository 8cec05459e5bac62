/**
 * `npm run test:gpu` (opt-in, like test:cluster): svc's GPU path on a machine with NVIDIA GPUs,
 * nvidia-smi and PyTorch in the system Python. Skipped, saying so, where nvidia-smi is absent.
 *
 * The embedded platform reads the real inventory (no SVC_GPU_INVENTORY). A class loads a small
 * PyTorch model onto the GPU in its `@svc.enter()` and answers with what CUDA says inside the
 * container, checked against the inventory; as many containers as GPUs plus one: one waits, is
 * said to wait, then runs; a cold start is timed with and without `checkpoint_enabled` (the
 * figures are printed for docs/gpus.md).
 *
 * The images' runtime layer is built as for any deploy (pip or uv installs the runtime's
 * requirements): on a machine without a package index, point SVC_CACHE_DIR at a cache where it
 * was built for that Python. PyTorch is the system Python's (`python3 -c "import torch"`), found
 * by the test and appended to the containers' sys.path (test/fixtures/gpu-torch/app.py).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { LogLine } from '../../core/infra/scheduler/types.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import type { Deployment } from '../../core/services/deployments/types.js';
import { testConfig } from '../helpers/config.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { until } from '../helpers/until.js';
import { deployRequest } from '../e2e/lifecycle-helpers.js';

const run = promisify(execFile);
type Answer = { pid: number; cuda: string; device: string; devices: number; out: number[][] };

/** The machine's GPUs by UUID (name), or why there are none to test on. */
async function machineGpus(): Promise<Map<string, string> | string> {
  try {
    const { stdout } = await run('nvidia-smi', ['--query-gpu=uuid,name', '--format=csv,noheader'], { encoding: 'utf8', timeout: 10_000 });
    const gpus = new Map(
      stdout
        .trim()
        .split('\n')
        .map((line) => line.split(',').map((field) => field.trim()) as [string, string]),
    );
    return gpus.size > 0 ? gpus : 'nvidia-smi lists no GPU';
  } catch (error) {
    return `no GPU to test on (nvidia-smi: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

/** The folder holding the system Python's torch, for the containers' sys.path. */
async function torchSite(): Promise<string> {
  const python = process.env.SVC_PYTHON ?? 'python3';
  const { stdout } = await run(python, ['-c', 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))'], {
    encoding: 'utf8',
  });
  return stdout.trim();
}

describe('GPUs for real: PyTorch on the GPU, waiting, checkpointed cold starts (npm run test:gpu)', function () {
  this.timeout(600_000);
  let gpus: Map<string, string>;
  let platform: Platform;
  let deployment: Deployment;
  const lines: LogLine[] = [];
  const logged = (pattern: RegExp) => lines.filter((line) => pattern.test(line.text));
  const url = (workload: string) => deployment.workloads.find((w) => w.name === workload)!.url!;
  const unit = (workload: string) => deployment.workloads.find((w) => w.name === workload)!.unit!;
  const scaledToZero = (workload: string) => (platform.autoscaler.status(unit(workload))?.containers.length ?? 1) === 0;

  before(async function () {
    const found = await machineGpus();
    if (typeof found === 'string') {
      console.log(`      skipped: ${found}. The GPU path has not met a GPU here; test/e2e/gpus*.test.ts cover it on inventory files.`);
      this.skip();
    }
    gpus = found;
    process.env.TEST_TORCH_SITE = await torchSite();
    process.env.TEST_GPU_COUNT = String(gpus.size);
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'gpu-torch', 'app.py') });
    platform = await startPlatform({ config: testConfig(), logs: (line) => lines.push(line) });
    assert.equal(logged(/^GPUs: \d+ from nvidia-smi/).length, 1, 'the inventory comes from nvidia-smi');
    deployment = await platform.deployments.deploy(deployRequest(manifest));
  });
  after(async () => platform?.close());

  it('runs the model on the GPU it was given: CUDA sees that one device, the one the inventory names', async () => {
    const answer = await fetch(url('infer-infer'));
    assert.equal(answer.status, 200, await answer.clone().text());
    const body = (await answer.json()) as Answer;
    assert.equal(body.devices, 1, 'CUDA_VISIBLE_DEVICES shows the container its own GPU only');
    assert.equal(body.device, gpus.get(body.cuda), `${body.cuda} is ${gpus.get(body.cuda)} in nvidia-smi`);
    assert.equal(body.out[0]!.length, 2);
  });

  it('makes a container that finds every GPU held wait, says why, then runs it', async () => {
    const long = Array.from({ length: gpus.size }, () => fetch(`${url('infer-infer')}?seconds=8`));
    await until('each GPU held busy', () => (platform.autoscaler.status(unit('infer-infer'))?.inFlight ?? 0) >= gpus.size, {
      timeoutMs: 120_000,
    });
    const last = fetch(url('infer-infer'));
    await until('a container waits for a GPU', () => logged(/waits for a GPU \(gpu any\): held by container/).length > 0, {
      timeoutMs: 60_000,
    });
    const why = platform.autoscaler.waitReason(unit('infer-infer'));
    console.log(`      while it waits: ${why}`);
    assert.match(why ?? '', /^waiting for a GPU \(gpu any\): \d+ of \d+ \S+ busy \(held by container/);
    for (const answer of await Promise.all(long)) assert.equal(answer.status, 200);
    const answer = await last;
    assert.equal(answer.status, 200, 'it ran once a GPU was given back (keep_warm 1 s)');
  });

  for (const workload of ['infer-infer', 'infersnap-infer']) {
    it(`times a cold start of ${workload}`, async () => {
      await until(`${workload} scaled to zero`, () => scaledToZero(workload), { timeoutMs: 120_000 });
      const started = performance.now();
      const answer = await fetch(url(workload));
      const seconds = (performance.now() - started) / 1000;
      assert.equal(answer.status, 200);
      const forked = logged(/forked from checkpoint template/).length > 0;
      console.log(
        `      cold start of ${workload}: ${seconds.toFixed(2)} s to the first answer${forked ? ' (forked from its checkpoint template)' : ''}`,
      );
      if (workload === 'infersnap-infer') assert.ok(forked, 'the checkpointed class forks from its template');
    });
  }
});
