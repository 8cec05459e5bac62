/**
 * A bench's own `svc server`, as a user runs it (the CLI in a process of its own, so that its CPU and memory
 * are its own), and what the benches read of a process from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CLI the benches run: `node <CLI> server`, `node <CLI> volume put`, … */
export const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'index.js');

/** `svc server --port 0 --data-dir <dir>`, until it prints its URL. */
export async function startServer(dataDir: string): Promise<{ child: ChildProcess; url: string; token: string }> {
  const child = spawn(process.execPath, [CLI, 'server', '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const found = /svc server is listening on (\S+)/.exec(out)?.[1];
      if (found) resolve(found);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`svc server exited with ${code} before it listened:\n${out}`)));
  });
  // Its log (the containers' lines) is not kept: a million inputs must not grow this process either.
  child.stdout!.removeAllListeners('data').resume();
  child.stderr!.removeAllListeners('data').resume();
  return { child, url, token: readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim() };
}

export function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return line === undefined ? 0 : Number(line.split(/\s+/)[1]) * 1024;
}
