/**
 * svc with deployed apps in a process of its own, for restart tests that kill it:
 * `node lifecycle-child.js <data dir> <port> <app.py>[:pause] ...` starts the
 * platform on that data dir and port, deploys each app (stage `deployed`,
 * pausing those marked `:pause`), prints `{"url": ...}` on one line and waits to be killed.
 */
import { loadManifest } from '../../core/infra/manifest-loader/load.js';
import { DEFAULT_WORKSPACE, startPlatform } from '../../core/platform/platform.js';
import { testConfig } from './config.js';
import { localDriverOf } from './local-driver.js';

const [dataDir, port, ...apps] = process.argv.slice(2);
if (!dataDir || !port) throw new Error('usage: lifecycle-child.js <data dir> <port> <app.py>[:pause] ...');
const platform = await startPlatform({
  config: testConfig({ dataDir, port: Number(port) }),
  logs: (line) => process.stderr.write(`${line.container} ${line.text}\n`),
});
for (const app of apps) {
  const [target, action] = app.split(':');
  const manifest = await loadManifest({ target: target! });
  const deployment = await platform.deployments.deploy({
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage: 'deployed',
    principal: null,
  });
  if (action === 'pause') await platform.deployments.pause(deployment.ref);
}
process.stdout.write(`${JSON.stringify({ url: platform.url, socketDir: localDriverOf(platform).socketDir })}\n`);
setInterval(() => {}, 60_000);
