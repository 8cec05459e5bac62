import assert from 'node:assert/strict';
import path from 'node:path';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { burst } from '../helpers/burst.js';
import { testConfig } from '../helpers/config.js';

/** Admission through the real gateway to a real container: capacity 2 (concurrency), queue 3. */
describe('admission at max_pending_tasks (real container)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let deployment: Deployment;

  before(async () => {
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', 'busy.py') });
    platform = await startPlatform({ config: testConfig() });
    deployment = await platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed',
      principal: null,
    });
  });
  after(async () => platform?.close());

  it('admits exactly capacity + max_pending_tasks of a burst; the rest get 429 queue_full with Retry-After', async () => {
    // Every request reaches the gateway in one tick (burst): with fetch they trickle in over connects, and on a busy
    // machine the first answers (0.5 s) came back before the last requests arrived, freeing slots for them.
    const url = `${deployment.workloads[0]!.url}?seconds=0.5`;
    for (let trial = 0; trial < 3; trial++) {
      const answers = (await burst(url, 20)).map((answer) => ({
        status: answer.status,
        retryAfter: answer.headers['retry-after'] ?? null,
        code: (JSON.parse(answer.body) as { error?: { code: string } }).error?.code,
      }));
      const ok = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 429);
      assert.equal(ok.length, 5, JSON.stringify(answers));
      assert.equal(refused.length, 15);
      for (const answer of refused) {
        assert.equal(answer.code, 'queue_full');
        assert.equal(answer.retryAfter, '1');
      }
    }
  });
});
