/**
 * A gateway in front of a stand-in container (a node:http server on a TCP
 * port), so gateway behaviour can be tested without Python. Real containers
 * are in test/e2e/gateway-limits.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type { DeploymentRef } from '../../../../core/model/deployment-keys.js';
import { createGateway } from '../../../../core/traffic/gateway/app.js';
import { Admission } from '../../../../core/traffic/gateway/admission.js';
import { UpstreamPools } from '../../../../core/traffic/gateway/proxy.js';
import { RouteTable } from '../../../../core/traffic/gateway/route-table.js';
import type { RouteEntry } from '../../../../core/traffic/gateway/types.js';
import { createPluginHost } from '../../../../core/infra/plugin/host.js';
import type { Plugin } from '../../../../core/infra/plugin/types.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import type { ServiceRegistry } from '../../../../core/infra/registry/types.js';
import type { Workload } from '../../../../core/model/workload/types.js';

export const ref: DeploymentRef = { workspace: 'default', app: 'demo', stage: 'deployed' };
export const UNIT = 'default/demo/deployed/w';
export const PREFIX = '/default/demo/w';

/** A public endpoint workload named `w` on route `/`. */
export function endpoint(overrides: Partial<Workload> = {}, methods: string[] = ['GET', 'POST']): Workload {
  return {
    app: 'demo',
    name: 'w',
    kind: 'endpoint',
    handler: 'w',
    onStart: null,
    doc: null,
    image: { id: 'img-1', pythonVersion: '3.11', pythonPackages: [], requirementsFiles: [], env: {} },
    resources: { cpu: 1, memoryMiB: 512 },
    http: { route: '/', methods, authorized: false, domain: null },
    scaling: {
      workers: 1,
      concurrency: 1,
      maxPendingTasks: 100,
      keepWarmSeconds: 60,
      checkpointEnabled: false,
      autoscaler: { minContainers: 0, maxContainers: 1, tasksPerContainer: 1 },
    },
    parameters: null,
    returns: null,
    ...overrides,
  };
}

export function routeEntry(workload: Workload = endpoint(), unit = UNIT, prefix = PREFIX): RouteEntry {
  return { ref, workload, unit, prefix };
}

export interface Harness {
  /** Base URL of the gateway. */
  readonly url: string;
  readonly port: number;
  /** Everything the gateway reported as a bug. */
  readonly reports: unknown[];
  /** Requests the stand-in container received. */
  readonly seen: http.IncomingMessage[];
  readonly registry: ServiceRegistry;
  readonly admission: Admission;
  /** The gateway's HTTP server (its client connections). */
  readonly server: http.Server;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** The stand-in container's handler. Default: answers `{"ok":true}`. */
  readonly container?: http.RequestListener;
  readonly methods?: string[];
  readonly maxBodyBytes?: number;
  /** The workload's max_pending_tasks (default 100). */
  readonly maxPendingTasks?: number;
  /** Protect the workload (without `plugins` nobody is authenticated: every request gets 401). */
  readonly authorized?: boolean;
  /** The gateway's plugins (default: none). */
  readonly plugins?: readonly Plugin[];
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const seen: http.IncomingMessage[] = [];
  const handler: http.RequestListener =
    options.container ?? ((_req, res) => res.setHeader('content-type', 'application/json').end('{"ok":true}'));
  const container = http.createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  const containerPort = await listen(container);

  const registry = createEmbeddedRegistry();
  const routes = new RouteTable();
  const base = endpoint({}, options.methods);
  routes.add([
    routeEntry({
      ...base,
      http: { ...base.http!, authorized: options.authorized ?? false },
      scaling: { ...base.scaling, maxPendingTasks: options.maxPendingTasks ?? base.scaling.maxPendingTasks },
    }),
  ]);
  const upstreams = new UpstreamPools(registry);
  const admission = new Admission(registry);
  await registry.register({
    id: 'c-1',
    service: UNIT,
    address: { kind: 'tcp', host: '127.0.0.1', port: containerPort },
    capacity: 1,
    meta: {},
  });

  const reports: unknown[] = [];
  const gateway = createGateway({
    routes,
    upstreams,
    admission,
    plugins: createPluginHost(options.plugins ?? []),
    report: (error) => reports.push(error),
    maxBodyBytes: options.maxBodyBytes,
  });
  const server = http.createServer(gateway.handleRequest);
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    reports,
    seen,
    registry,
    admission,
    server,
    async close() {
      admission.close();
      await upstreams.close();
      for (const s of [server, container]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** Sends raw bytes and resolves everything the server answered until it closed or `idleMs` passed in silence. */
export function rawRequest(port: number, text: string, idleMs = 300): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    const done = () => {
      socket.destroy();
      resolve(answer);
    };
    let timer = setTimeout(done, idleMs);
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      clearTimeout(timer);
      timer = setTimeout(done, idleMs);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      done();
    });
    socket.on('error', reject);
    socket.write(text);
  });
}

/** Status code and JSON body of a raw HTTP/1.1 answer. */
export function parseAnswer(answer: string): { status: number; headers: string; body: string } {
  const [head = '', body = ''] = answer.split('\r\n\r\n', 2);
  return { status: Number(head.split(' ')[1]), headers: head, body };
}

export const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
