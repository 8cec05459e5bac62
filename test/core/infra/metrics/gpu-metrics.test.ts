import assert from 'node:assert/strict';
import { PlatformMetrics } from '../../../../core/infra/metrics/platform-metrics.js';

const ref = { workspace: 'default', app: 'gpus', stage: 'deployed' } as const;

describe('GPU metrics', () => {
  it('exports the GPUs by model and state, waiting containers per workload, and NVML usage per held GPU', async () => {
    const metrics = new PlatformMetrics();
    metrics.readUnits(() => [{ ref, workload: 'which', inFlight: 0, queued: 2, containers: { starting: 1, healthy: 2 }, gpuWaiting: 1 }]);
    metrics.gpus.read(async () => ({
      models: [{ model: 'L4', free: 0, busy: 2 }],
      held: [{ ref, workload: 'which', container: 'c-1', uuid: 'GPU-a', utilization: 0.37, memoryUsedBytes: 1073741824 }],
    }));
    const { body } = await metrics.scrape();
    metrics.close();
    const labels = 'workspace="default",app="gpus",workload="which",stage="deployed"';
    assert.match(body, /^svc_gpus\{model="L4",state="free"\} 0$/m);
    assert.match(body, /^svc_gpus\{model="L4",state="busy"\} 2$/m);
    assert.ok(body.includes(`svc_gpu_waiting_containers{${labels}} 1\n`), body);
    assert.ok(body.includes(`svc_gpu_utilization_ratio{${labels},container="c-1",gpu="GPU-a"} 0.37\n`));
    assert.ok(body.includes(`svc_gpu_memory_used_bytes{${labels},container="c-1",gpu="GPU-a"} 1073741824\n`));
  });

  it('exports no GPU series where the platform hands out none', async () => {
    const metrics = new PlatformMetrics();
    const { body } = await metrics.scrape();
    assert.doesNotMatch(body, /^svc_gpus\{/m);
  });
});
