/**
 * `svc server --port 0 --data-dir <dir>` of this checkout in a process of its own, as a user runs it,
 * until it prints its URL: for the scripts that make fixtures with a real server.
 */
import type { ChildProcess } from 'node:child_process';
import { CLI, listeningServer } from '../../bench/server-process.js';

export { CLI };

export interface ServerChild {
  readonly child: ChildProcess;
  readonly url: string;
  /** The owner token it made. */
  readonly owner: string;
  /** SIGINT, as Ctrl-C: it drains and exits; resolves once it has. */
  stop(): Promise<void>;
}

export async function startServerChild(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<ServerChild> {
  const { child, url, token } = await listeningServer(dataDir, { env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    url,
    owner: token,
    async stop() {
      child.kill('SIGINT');
      await exited;
    },
  };
}
