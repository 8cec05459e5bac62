/**
 * A GPU workload on real Nomad whose nodes have no GPU (opt-in: `npm run test:cluster`): the job asks
 * `nvidia/gpu`, Nomad cannot place its allocation, and the deploy fails at once with Nomad's reason in
 * svc's words, naming the GPUs, rather than waiting out its health timeout.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { useCluster } from './suite.js';
import { svcJobs } from './jobs.js';
import { SvcServer, svcCli } from './svc-process.js';

describe('svc on real Nomad and Consul: a GPU workload on a node without GPUs', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  let server: SvcServer;

  before(async () => {
    server = await SvcServer.serving((await cluster()).svcEnv());
  });
  after(async () => {
    await server?.stop();
  });

  it('fails the deploy with the placement failure Nomad reports, said for GPUs', async () => {
    const started = Date.now();
    const deployed = await svcCli(server, ['deploy', path.join(packageRoot, 'test', 'fixtures', 'gpu-nomad', 'app.py')]);
    const seconds = (Date.now() - started) / 1000;
    assert.notEqual(deployed.code, 0, deployed.stdout);
    assert.match(deployed.stderr, /cannot be placed/, deployed.stderr);
    assert.match(deployed.stderr, /no node has the GPUs its gpu= asks for|GPUs are all in use or no node has enough/, deployed.stderr);
    assert.ok(seconds < 60, `said at once (${seconds.toFixed(1)} s), not after a health timeout`);
    const left = (await svcJobs(await cluster())).filter((j) => j.Meta?.svc_app === 'gpu-place' && j.Status !== 'dead');
    assert.deepEqual(left, [], 'the failed deploy leaves no job running');
  });
});
