/**
 * svc's platform (what `svc server` starts) in its own process, with one of
 * the bench's apps deployed, so that `npm run bench` reads the gateway's CPU
 * from /proc like every other proxy's: this process's own time (the
 * containers are its children, counted apart). One app per platform: the
 * JSON endpoint's containers scaling under load must not land in the raw
 * path's figures. Prints one JSON line (see SvcChild), then serves until it
 * is signalled.
 *
 *   node dist/bench/gateway/svc-child.js <data dir> <app file in bench/apps>
 */
import path from 'node:path';
import { loadConfig } from '../../config/load.js';
import { loadManifest } from '../../core/infra/manifest-loader/load.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';

/** One deployed `hello` workload: its URL, its worker's socket and its containers' pids. */
export interface BenchWorkload {
  readonly url: string;
  readonly socketPath: string;
  readonly pids: readonly number[];
}

export interface SvcChild {
  readonly token: string;
  /** The app's `hello` workload. */
  readonly hello: BenchWorkload;
}

async function deployHello(platform: Platform, app: string): Promise<BenchWorkload> {
  const manifest = await loadManifest({ target: path.join(packageRoot, 'bench', 'apps', app), python: platform.config.python });
  const deployment = await platform.deployments.deploy({
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage: 'preview',
    principal: null,
  });
  const unit = deployment.units.find((name) => name.endsWith('/hello'))!;
  const [instance] = platform.registry.instances(unit);
  if (!instance || instance.address.kind !== 'unix') throw new Error(`no container of ${unit}`);
  return {
    url: deployment.workloads.find((workload) => workload.name === 'hello')!.url!,
    socketPath: instance.address.socketPath,
    pids: platform.driver.status(unit).flatMap((container) => (container.pid ? [container.pid] : [])),
  };
}

const [dataDir, app] = process.argv.slice(2);
const platform = await startPlatform({ config: loadConfig({ flags: { port: 0, dataDir: dataDir! } }) });
process.once('SIGTERM', () => void platform.close().then(() => process.exit(0)));
const answer: SvcChild = { token: platform.ownerToken.secret, hello: await deployHello(platform, app!) };
process.stdout.write(`${JSON.stringify(answer)}\n`);
