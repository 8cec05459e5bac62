/**
 * The servers and proxies `npm run bench` puts in front of the same raw ASGI
 * app: bare uvicorn (TCP and Unix socket), nginx and haproxy from Debian, the
 * Node floor proxy, and, when their binaries are there, Knative's
 * queue-proxy and OpenFaaS's of-watchdog (svc itself: svc-server.ts). Each
 * runs as a child process (so that its CPU is its own, read from /proc) and
 * is stopped by `close()`.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FloorMode } from '../floor-proxy.js';

export interface Served {
  /** Its root process: the tree below it is what its CPU figure sums. */
  readonly pid: number;
  close(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** Whether something listens on 127.0.0.1:port (the Go peers bind fixed side ports). */
export function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The status of one GET (over TCP, or a Unix socket when given), or 0 when it failed. */
export function status(url: string, options: { socketPath?: string; headers?: Record<string, string> } = {}): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get(url, { socketPath: options.socketPath, headers: options.headers, agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    request.once('error', () => resolve(0));
    request.setTimeout(2000, () => request.destroy());
  });
}

/** Polls until `ready()` is true (every `everyMs`), failing when the child exits or after `timeoutMs`. */
export async function waitUntil(
  what: string,
  child: ChildProcess,
  ready: () => Promise<boolean>,
  everyMs = 20,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before it answered`);
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`${what} did not answer within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

function start(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  stdio: StdioOptions = ['ignore', 'ignore', 'inherit'],
): ChildProcess {
  return spawn(command, args, { env, stdio });
}

/** Stops a child (SIGTERM, or the signal given) and waits for it; SIGKILL after 3 s. */
export async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

function served(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Served {
  return { pid: child.pid!, close: () => stop(child, signal) };
}

export interface PythonEnv {
  /** The interpreter (a venv's) with uvicorn, uvloop and httptools. */
  readonly python: string;
  /** PYTHONPATH: the SDK (raw_asgi.py imports svc) and bench/apps. */
  readonly pythonPath: string;
}

/** Bare uvicorn, as fast as it goes: httptools, uvloop, no access log, no lifespan. */
export function uvicornArgs(listen: { port: number } | { uds: string }): string[] {
  const where = 'port' in listen ? ['--host', '127.0.0.1', '--port', String(listen.port)] : ['--uds', listen.uds];
  return [
    '-m',
    'uvicorn',
    'raw_asgi:hello',
    '--http',
    'httptools',
    '--loop',
    'uvloop',
    '--no-access-log',
    '--lifespan',
    'off',
    '--log-level',
    'warning',
    ...where,
  ];
}

export function spawnUvicorn(python: PythonEnv, listen: { port: number } | { uds: string }): ChildProcess {
  return start(python.python, uvicornArgs(listen), { ...process.env, PYTHONPATH: python.pythonPath, PYTHONDONTWRITEBYTECODE: '1' });
}

export async function startUvicorn(python: PythonEnv, listen: { port: number } | { uds: string }): Promise<Served> {
  const child = spawnUvicorn(python, listen);
  const ok =
    'port' in listen ? () => status(`http://127.0.0.1:${listen.port}/`) : () => status('http://localhost/', { socketPath: listen.uds });
  await waitUntil('uvicorn', child, async () => (await ok()) === 200);
  return served(child);
}

/** One nginx server block: a port on 127.0.0.1 proxied to a Unix socket. */
export interface Upstream {
  readonly port: number;
  readonly socketPath: string;
}

/**
 * Debian's nginx, one worker, no access log, kept-alive upstream connections
 * (HTTP/1.1, `Connection ""`), in the foreground. Its files stay in `dir`.
 * As root its worker would run as www-data, which cannot reach svc's private
 * socket folders: it runs as root then.
 */
export async function startNginx(dir: string, upstreams: readonly Upstream[]): Promise<Served> {
  mkdirSync(dir, { recursive: true });
  const blocks = upstreams
    .map(
      ({ port, socketPath }, index) => `
  upstream app${index} {
    server unix:${socketPath};
    keepalive 256;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://app${index};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }`,
    )
    .join('\n');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((name) => `  ${name}_temp_path ${path.join(dir, name)};`)
    .join('\n');
  const config = `${process.getuid?.() === 0 ? 'user root;\n' : ''}worker_processes 1;
daemon off;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
${temp}
${blocks}
}
`;
  const file = path.join(dir, 'nginx.conf');
  writeFileSync(file, config);
  const child = start('nginx', ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', file], process.env);
  for (const { port } of upstreams) await waitUntil('nginx', child, async () => (await status(`http://127.0.0.1:${port}/`)) !== 0);
  return served(child, 'SIGQUIT'); // a graceful stop (SIGTERM is nginx's fast one; either ends the worker too)
}

/** Debian's haproxy, one thread, HTTP mode, connections to the server reused, no logging. */
export async function startHaproxy(dir: string, upstream: Upstream): Promise<Served> {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'haproxy.cfg');
  writeFileSync(
    file,
    `global
  nbthread 1
  maxconn 4096
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  http-reuse always
frontend bench
  bind 127.0.0.1:${upstream.port}
  default_backend app
backend app
  server app unix@${upstream.socketPath} maxconn 256
`,
  );
  const child = start('haproxy', ['-db', '-f', file], process.env);
  await waitUntil('haproxy', child, async () => (await status(`http://127.0.0.1:${upstream.port}/`)) !== 0);
  return served(child);
}

/** A Node script of the bench's in its own process (its CPU is then its own), and the first line it prints. */
async function nodeChild(script: string, args: readonly string[], what: string): Promise<Served & { line: string }> {
  const child = start(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), script), ...args], process.env, [
    'ignore',
    'pipe',
    'inherit',
  ]);
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const end = out.indexOf('\n');
      if (end >= 0) resolve(out.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
  return { ...served(child), line };
}

/** bench/floor-proxy.ts in its own process (`mode`: see FloorMode); it prints its URL. */
export async function startFloorChild(socketPath: string, connections: number, mode: FloorMode): Promise<Served & { url: string }> {
  const { line, ...rest } = await nodeChild('floor-child.js', [socketPath, String(connections), mode], 'the floor proxy');
  return { ...rest, url: line };
}

/** A Go peer's binary: the env variable's path, else the name on PATH, else null. */
export function peerBinary(envName: string, command: string): string | null {
  const given = process.env[envName];
  if (given) return existsSync(given) ? given : null;
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** The first line a binary prints for `args` (its version; nginx prints it on stderr, wrk exits 1), or null. */
export function versionOf(command: string, args: readonly string[]): string | null {
  const { stdout, stderr } = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 5000 });
  return (
    `${stdout ?? ''}${stderr ?? ''}`
      .split('\n')
      .find((line) => line.trim())
      ?.trim() ?? null
  );
}

/**
 * OpenFaaS's of-watchdog in HTTP mode in front of `upstreamPort`. It also
 * binds 8081 (its metrics, fixed) and logs a line per request on stderr,
 * which goes nowhere.
 */
export async function startOfWatchdog(binary: string, dir: string, port: number, upstreamPort: number): Promise<Served> {
  if (await portTaken(8081)) throw new Error("port 8081 (of-watchdog's metrics port, fixed) is taken");
  mkdirSync(dir, { recursive: true });
  const env = {
    ...process.env,
    mode: 'http',
    upstream_url: `http://127.0.0.1:${upstreamPort}`,
    fprocess: 'sleep infinity',
    port: String(port),
    ready_path: '/',
    TMPDIR: dir,
  };
  const child = start(binary, [], env, ['ignore', 'ignore', 'ignore']);
  await waitUntil('of-watchdog', child, async () => (await status(`http://127.0.0.1:${port}/_/ready`)) === 200);
  return served(child);
}

/**
 * Knative's queue-proxy in front of 127.0.0.1:`upstreamPort`, no
 * concurrency limit. It binds 8022 and 9090 too (fixed). It drains for 30 s
 * on SIGTERM: it is killed instead.
 */
export async function startQueueProxy(binary: string, port: number, upstreamPort: number): Promise<Served> {
  for (const fixed of [8022, 9090]) if (await portTaken(fixed)) throw new Error(`port ${fixed} (queue-proxy's, fixed) is taken`);
  const env = {
    ...process.env,
    SERVING_NAMESPACE: 'default',
    SERVING_CONFIGURATION: 'bench',
    SERVING_REVISION: 'bench-00001',
    SERVING_POD: 'bench-pod',
    SERVING_POD_IP: '127.0.0.1',
    QUEUE_SERVING_PORT: String(port),
    QUEUE_SERVING_TLS_PORT: String(await freePort()),
    USER_PORT: String(upstreamPort),
    CONTAINER_CONCURRENCY: '0',
    REVISION_TIMEOUT_SECONDS: '300',
    SERVING_LOGGING_CONFIG: '',
    SERVING_LOGGING_LEVEL: 'warn',
    SERVING_READINESS_PROBE: JSON.stringify({ tcpSocket: { host: '127.0.0.1', port: upstreamPort }, successThreshold: 1 }),
  };
  const child = start(binary, [], env, ['ignore', 'ignore', 'ignore']);
  const probe = { 'user-agent': 'kube-probe/1.0', 'k-network-probe': 'queue' };
  await waitUntil('queue-proxy', child, async () => (await status(`http://127.0.0.1:${port}/`, { headers: probe })) === 200);
  return served(child, 'SIGKILL');
}
