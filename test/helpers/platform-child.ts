/**
 * A platform in a process of its own, for tests that kill it:
 * `node platform-child.js <app.py> [<workload>=<containers> ...]` starts the
 * embedded platform, deploys the app (preview), scales the named workloads,
 * prints `{"socketDir": ...}` on one line and waits to be killed.
 */
import { loadManifest } from '../../core/infra/manifest-loader/load.js';
import { DEFAULT_WORKSPACE, startPlatform } from '../../core/platform/platform.js';
import { testConfig } from './config.js';
import { localDriverOf } from './local-driver.js';

const [target, ...scales] = process.argv.slice(2);
if (!target) throw new Error('usage: platform-child.js <app.py> [<workload>=<containers> ...]');
const manifest = await loadManifest({ target });
const platform = await startPlatform({ config: testConfig(), logs: (line) => process.stderr.write(`${line.container} ${line.text}\n`) });
const deployment = await platform.deployments.deploy({
  spec: manifest.spec,
  source: { root: manifest.root, entry: manifest.spec.entry },
  workspace: DEFAULT_WORKSPACE,
  stage: 'preview',
  principal: null,
});
for (const scale of scales) {
  const [name, count] = scale.split('=');
  const unit = deployment.units.find((key) => key.endsWith(`/${name}`));
  if (!unit) throw new Error(`no workload ${name}`);
  await platform.driver.scale(unit, Number(count));
}
process.stdout.write(`${JSON.stringify({ socketDir: localDriverOf(platform).socketDir })}\n`);
setInterval(() => {}, 60_000);
