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

/** A `svc server` that printed its URL: its process, URL, owner token and what it printed so far. */
export interface ListeningServer {
  readonly child: ChildProcess;
  readonly url: string;
  readonly token: string;
  output(): string;
}

/**
 * `node <cli> server --port 0 --data-dir <dir>` until it prints its URL (the benches' and the fixture scripts'
 * one way to start a server as a user runs it); what it prints keeps being collected into `output()`.
 */
export async function listeningServer(dataDir: string, options: { cli?: string; env?: NodeJS.ProcessEnv } = {}): Promise<ListeningServer> {
  const child = spawn(process.execPath, [options.cli ?? CLI, 'server', '--port', '0', '--data-dir', dataDir], {
    env: { ...(options.env ?? process.env), NO_COLOR: '1' },
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
  return { child, url, token: readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim(), output: () => out };
}

/** `svc server --port 0 --data-dir <dir>`, until it prints its URL; its output is dropped from then on. */
export async function startServer(dataDir: string): Promise<{ child: ChildProcess; url: string; token: string }> {
  const { child, url, token } = await listeningServer(dataDir);
  // Its log (the containers' lines) is not kept: a million inputs must not grow this process either.
  child.stdout!.removeAllListeners('data').resume();
  child.stderr!.removeAllListeners('data').resume();
  return { child, url, token };
}

export function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return line === undefined ? 0 : Number(line.split(/\s+/)[1]) * 1024;
}
