/**
 * `svc server --port 0 --data-dir <dir>` of this checkout in a process of its own, as a user runs it,
 * until it prints its URL: for the scripts that make fixtures with a real server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';

export const CLI = path.join(packageRoot, 'dist', 'cli', 'index.js');

export interface ServerChild {
  readonly child: ChildProcess;
  readonly url: string;
  /** The owner token it made. */
  readonly owner: string;
  /** SIGINT, as Ctrl-C: it drains and exits; resolves once it has. */
  stop(): Promise<void>;
}

export async function startServerChild(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<ServerChild> {
  const child = spawn(process.execPath, [CLI, 'server', '--port', '0', '--data-dir', dataDir], {
    env: { ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /svc server is listening on (\S+)/.exec(output)?.[1];
      if (found) resolve(found);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`svc server exited ${code} before it listened:\n${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    url,
    owner: readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim(),
    async stop() {
      child.kill('SIGINT');
      await exited;
    },
  };
}
