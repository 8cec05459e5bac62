import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import { WorkerSet } from '../../../../core/infra/scheduler/local/workers.js';
import { fixtureUnit } from './fixture-units.js';
import { until } from '../../../helpers/until.js';
import type { BuiltImage } from '../../../../core/infra/images/types.js';

const image: BuiltImage = { key: 'k', imageId: 'img', pythonPath: '/usr/bin/python3', path: '/', cached: true };

/** A stand-in worker: answers its health route on a Unix socket. */
function fakeWorker(socketPath: string): Promise<http.Server> {
  const server = http.createServer((_request, response) => response.end('{"status":"ok"}'));
  return new Promise((resolve) => server.listen(socketPath, () => resolve(server)));
}

describe('WorkerSet', () => {
  let dir: string;
  const servers: http.Server[] = [];
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'svc-ws-'))));
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
    rmSync(dir, { recursive: true, force: true });
  });

  function setup() {
    const registry = createEmbeddedRegistry();
    const unit = fixtureUnit(image, 'workers', 'parallel', { workers: 2, concurrency: 3 });
    const socketPaths = [0, 1].map((i) => path.join(dir, `c-1-w${i}.sock`));
    const logs: string[] = [];
    const workers = new WorkerSet({
      containerId: 'c-1',
      unit,
      socketPaths,
      registry,
      log: (text) => logs.push(text),
      restartTimeoutMs: 5_000,
    });
    return { registry, unit, socketPaths, logs, workers };
  }

  it('waits for every worker, then registers each as an instance with the concurrency as capacity', async () => {
    const t = setup();
    let outcome: string | undefined;
    const waiting = t.workers.waitHealthy(5_000, () => false).then((result) => (outcome = result));
    servers.push(await fakeWorker(t.socketPaths[0]!));
    t.workers.onEvent({ event: 'listening', worker: 0, pid: 10, socket: t.socketPaths[0]! });
    await new Promise((resolve) => setTimeout(resolve, 50));
    servers.push(await fakeWorker(t.socketPaths[1]!));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(outcome, undefined, 'a worker that answers before the runtime announced it is not healthy yet: its pid is unknown');
    t.workers.onEvent({ event: 'listening', worker: 1, pid: 11, socket: t.socketPaths[1]! });
    assert.equal(await waiting, 'healthy');
    assert.deepEqual(
      t.workers.status().map((w) => w.pid),
      [10, 11],
    );
    await t.workers.register();
    const instances = t.registry.instances(t.unit.key);
    assert.deepEqual(
      instances.map((i) => [i.id, i.capacity, i.meta.worker]),
      [
        ['c-1-w0', 3, '0'],
        ['c-1-w1', 3, '1'],
      ],
    );
  });

  it('times out while a worker never answers', async () => {
    const t = setup();
    servers.push(await fakeWorker(t.socketPaths[0]!));
    assert.equal(await t.workers.waitHealthy(200, () => false), 'timeout');
  });

  it('deregisters a worker when it exits and registers its replacement once healthy', async () => {
    const t = setup();
    for (const socketPath of t.socketPaths) servers.push(await fakeWorker(socketPath));
    t.workers.onEvent({ event: 'listening', worker: 0, pid: 10, socket: t.socketPaths[0]! });
    t.workers.onEvent({ event: 'listening', worker: 1, pid: 11, socket: t.socketPaths[1]! });
    await t.workers.waitHealthy(5_000, () => false);
    await t.workers.register();

    t.workers.onEvent({ event: 'worker_exited', worker: 1, pid: 11, status: 'signal SIGKILL', restartIn: 0.1 });
    assert.deepEqual(
      t.registry.instances(t.unit.key).map((i) => i.id),
      ['c-1-w0'],
    );
    assert.equal(t.workers.status()[1]!.pid, undefined);
    t.workers.onEvent({ event: 'worker_exited', worker: 0, pid: 99, status: 'code 1', restartIn: 0.1 });
    assert.equal(t.registry.instances(t.unit.key).length, 1, 'news of a process already replaced changes nothing');

    t.workers.onEvent({ event: 'listening', worker: 1, pid: 12, socket: t.socketPaths[1]! });
    await until('the replacement is registered', () => t.registry.instances(t.unit.key).length === 2, 5_000);
    assert.deepEqual(
      t.workers.status().map((w) => [w.pid, w.registered]),
      [
        [10, true],
        [12, true],
      ],
    );
    assert.deepEqual(t.logs, [
      'worker 1 of c-1 (pid 11) exited with signal SIGKILL; deregistered, restarting in 0.1 s',
      'worker 1 of c-1 is back (pid 12) and registered',
    ]);

    await t.workers.deregister();
    t.workers.onEvent({ event: 'listening', worker: 0, pid: 13, socket: t.socketPaths[0]! });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(t.registry.instances(t.unit.key).length, 0, 'a container out of service registers nothing');
  });
});
