import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { fixtureAppsRoot, onStartCalls, recordDir } from '../core/infra/scheduler/fixture-units.js';
import { testConfig } from '../helpers/config.js';
import { pidsMatching, waitNoneMatching } from '../helpers/processes.js';
import { localDriverOf } from '../helpers/local-driver.js';

const workersApp = path.join(fixtureAppsRoot, 'workers.py');
const checkpointApp = path.join(fixtureAppsRoot, 'checkpoint.py');

async function deploy(platform: Platform, target: string): Promise<Deployment> {
  const manifest = await loadManifest({ target });
  return platform.deployments.deploy({
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage: 'preview',
    principal: null,
  });
}

describe('workers behind the gateway (in process)', function () {
  this.timeout(180_000);
  let platform: Platform | undefined;
  afterEach(async () => platform?.close());

  it('never sends one worker more than `concurrency` requests at once, and uses every worker', async () => {
    const record = recordDir();
    platform = await startPlatform({ config: testConfig() });
    const deployment = await deploy(platform, workersApp);
    const url = deployment.workloads.find((w) => w.name === 'parallel')!.url!;
    // 2 workers × concurrency 2 = 4 at once; 16 requests of 300 ms keep both saturated.
    const statuses = await Promise.all(Array.from({ length: 16 }, async () => (await fetch(`${url}?seconds=0.3`)).status));
    assert.deepEqual(new Set(statuses), new Set([200]));

    const seen = readdirSync(record)
      .filter((name) => name.startsWith('parallel-'))
      .map((name) => JSON.parse(readFileSync(path.join(record, name), 'utf8')) as { pid: number; most: number });
    const [container] = platform.driver.status(deployment.units[0]!);
    assert.deepEqual(seen.map((s) => s.pid).sort(), container!.workers.map((w) => w.pid).sort(), 'every worker served');
    for (const worker of seen) assert.ok(worker.most <= 2, `worker ${worker.pid} held ${worker.most} requests at once`);
    assert.ok(
      seen.some((worker) => worker.most === 2),
      'the load reached the limit',
    );
  });

  it('stops the template, every container and every worker when the platform closes', async () => {
    const record = recordDir();
    platform = await startPlatform({ config: testConfig() });
    const deployment = await deploy(platform, checkpointApp);
    await platform.driver.scale(deployment.units.find((key) => key.endsWith('/warm'))!, 2);
    assert.equal(onStartCalls(record, 'warm').length, 1);
    const marker = localDriverOf(platform).socketDir;
    assert.equal(
      pidsMatching(marker).length,
      1 + 2 * 3 + 3 + 1,
      'template, 2 warm containers, 1 cold one (each a supervisor and 2 workers), and the zygote of their image',
    );
    await platform.close();
    assert.deepEqual(await waitNoneMatching(marker, 5_000), []);
  });

  it('leaves no process behind when the platform process is killed with SIGKILL', async () => {
    recordDir();
    const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'helpers', 'platform-child.js');
    const child = spawn(process.execPath, [script, checkpointApp, 'warm=2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.on('exit', (code) => reject(new Error(`the platform process exited with ${code}:\n${stderr}`)));
    });
    const { socketDir } = JSON.parse(line) as { socketDir: string };
    try {
      assert.equal(pidsMatching(socketDir).length, 11, 'the template, three containers of three processes, and the zygote of their image');
      child.kill('SIGKILL');
      assert.deepEqual(await waitNoneMatching(socketDir, 10_000), [], 'every process saw its lifeline close');
    } finally {
      child.kill('SIGKILL');
      rmSync(socketDir, { recursive: true, force: true });
    }
  });
});
