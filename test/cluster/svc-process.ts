/**
 * `svc server` and the CLI as child processes against the real agents, as an
 * operator runs them: each replica is a process a test can SIGKILL.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { tempDir } from '../helpers/config.js';
import { freePort } from '../helpers/free-port.js';
import { until } from '../helpers/until.js';

export const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');

export class SvcServer {
  /** Every server started and not yet stopped: the suite stops them before it stops the agents. */
  static readonly #running = new Set<SvcServer>();
  #child: ChildProcess | null = null;
  #output = '';
  constructor(
    readonly port: number,
    readonly dataDir: string,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Stops every server still running (before the agents go: svc's shutdown still talks to them). */
  static async stopAll(): Promise<void> {
    await Promise.all([...SvcServer.#running].map((server) => server.stop()));
  }

  static async create(dataDir: string, env: NodeJS.ProcessEnv): Promise<SvcServer> {
    return new SvcServer(await freePort(), dataDir, env);
  }

  /** A server on a fresh data dir with the cluster's environment, started and ready: what most cluster files run. */
  static async serving(env: NodeJS.ProcessEnv): Promise<SvcServer> {
    const server = await SvcServer.create(tempDir('svc-data-'), env);
    server.start();
    await server.ready();
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get output(): string {
    return this.#output;
  }

  get ownerToken(): string {
    return readFileSync(path.join(this.dataDir, 'owner-token'), 'utf8').trim();
  }

  start(): void {
    this.#output = '';
    const child = spawn(process.execPath, [cli, 'server', '--host', '127.0.0.1', '--port', String(this.port)], {
      env: { ...this.env, SVC_DATA_DIR: this.dataDir, SVC_ADVERTISE_URL: this.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      this.#output = (this.#output + chunk.toString('utf8')).slice(-200_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.#child = child;
    SvcServer.#running.add(this);
  }

  get running(): boolean {
    const child = this.#child;
    return child !== null && child.exitCode === null && child.signalCode === null;
  }

  async ready(status: 'ready' | 'following' | 'stranded' = 'ready', timeoutMs = 120_000): Promise<void> {
    await until(
      `svc server on port ${this.port} is ${status}`,
      async () => {
        if (!this.running) throw new Error(`svc server exited:\n${this.#output.slice(-4000)}`);
        const response = await fetch(`${this.url}/_svc/ready`).catch(() => null);
        return response !== null && ((await response.json().catch(() => ({}))) as { status?: string }).status === status;
      },
      { timeoutMs, intervalMs: 250, context: () => this.#output.slice(-4000) },
    );
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    SvcServer.#running.delete(this);
    const child = this.#child;
    if (child === null) return null;
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    const ended = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await ended;
    clearTimeout(timer);
    this.#child = null;
    return code;
  }
}

export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `svc <args>` against `server` with its owner token. */
export function svcCli(server: SvcServer, args: readonly string[], cwd = packageRoot, timeoutMs = 300_000): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
      {
        cwd,
        timeout: timeoutMs,
        maxBuffer: 16 << 20,
        env: { ...process.env, SVC_SERVER: server.url, SVC_TOKEN: server.ownerToken, NO_COLOR: '1' },
      },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });
}

/** What `svc deploy --json` prints: the app and each workload's URL. */
export interface Deployed {
  readonly app: string;
  readonly workloads: { readonly name: string; readonly url: string | null }[];
}

/** `svc deploy <target> --json` against `server`, failing the test with its output when it fails; each URL is kept in `urls` as `<app>/<workload>`. */
export async function deployTo(server: SvcServer, target: string, urls: Record<string, string>): Promise<Deployed> {
  const ran = await svcCli(server, ['deploy', target, '--json']);
  assert.equal(ran.code, 0, `${ran.stdout}\n${ran.stderr}\n${server.output.slice(-3000)}`);
  const result = JSON.parse(ran.stdout) as Deployed;
  for (const w of result.workloads) if (w.url !== null) urls[`${result.app}/${w.name}`] = w.url;
  return result;
}
