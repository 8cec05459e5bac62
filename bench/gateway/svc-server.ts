/**
 * svc as a user runs it: `svc server` (the CLI, its default configuration,
 * gateway and control plane in one process) and `svc deploy` of one of the
 * bench's apps with the owner token it created, both as child processes.
 * `npm run bench` reads the server's CPU from /proc like every other
 * proxy's: that process's own time (the containers are its children,
 * counted apart). One app per server: the JSON endpoint's containers scaling
 * under load must not land in the raw path's figures.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../core/model/paths.js';
import { processTree } from './cpu.js';
import { stop, type Served } from './proxies.js';
import { CLI, listeningServer } from '../server-process.js';

const run = promisify(execFile);

/** One deployed `hello` workload: its URL, its worker's socket (as its container logged it) and the pids of the server's containers. */
export interface BenchWorkload {
  readonly url: string;
  readonly socketPath: string;
  readonly pids: readonly number[];
}

export interface SvcServer extends Served {
  readonly token: string;
  /** The app's `hello` workload. */
  readonly hello: BenchWorkload;
}

/**
 * `svc server --port 0 --data-dir <dir>` until it prints its URL; then `svc deploy bench/apps/<app>`.
 * `cli`: another build's CLI (`<checkout>/dist/cli/index.js`, BENCH_BEFORE), for before and after in one run.
 */
export async function startSvcServer(dataDir: string, app: string, cli = CLI): Promise<SvcServer> {
  // Its output (the containers' log lines among it) is kept for what the bench reads of it, and for an error.
  const { child, url, token, output } = await listeningServer(dataDir, { cli });
  const served: Served = { pid: child.pid!, close: () => stop(child) };
  try {
    const env = { ...process.env, SVC_SERVER: url, SVC_TOKEN: token, NO_COLOR: '1' };
    const { stdout } = await run(process.execPath, [cli, 'deploy', path.join(packageRoot, 'bench', 'apps', app)], {
      env,
      maxBuffer: 1 << 20,
    });
    // `svc deploy` prints each workload's URL on stdout: `hello  http://…/default/<app>/hello`.
    const hello = /^hello\s+(\S+)$/m.exec(stdout)?.[1];
    if (!hello) throw new Error(`svc deploy ${app} printed no URL for hello:\n${stdout}`);
    // The container logged its worker's socket before it was healthy, so before the deploy answered.
    const socketPath = / hello listening on (\S+\.sock)/.exec(output())?.[1];
    if (!socketPath) throw new Error(`svc server logged no socket for hello:\n${output()}`);
    child.stdout!.removeAllListeners('data').resume();
    child.stderr!.removeAllListeners('data').resume();
    return { ...served, token, hello: { url: hello, socketPath, pids: containers(child.pid!) } };
  } catch (error) {
    await served.close();
    throw error;
  }
}

/** Every process below the server, once each: its containers (any other workload idle meanwhile) and the image's zygote. */
function containers(serverPid: number): number[] {
  return processTree(serverPid).filter((pid) => pid !== serverPid);
}
