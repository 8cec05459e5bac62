/**
 * The runtime in TCP mode, started the way a Nomad raw_exec task starts it:
 * the compiled job's command, args and env (jobs/task.ts), with Nomad's
 * `${NOMAD_*}` placeholders replaced by a task dir, 127.0.0.1 and real free
 * ports, over an extracted copy of examples/quickstart. Each worker must
 * answer `/hello` on its own port.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import { createVenvBuilder } from '../../../../core/infra/images/venv-builder.js';
import { loadManifest } from '../../../../core/infra/manifest-loader/load.js';
import { sdkPythonPath } from '../../../../core/model/paths.js';
import type { Workload } from '../../../../core/model/workload/types.js';
import { compileJob } from '../../../../jobs/compile.js';
import { BUNDLE_DEST } from '../../../../jobs/task.js';
import { quickstartApp, tempDir, testCacheDir } from '../../../helpers/config.js';
import { jobContext } from '../../../jobs/fixtures.js';

/** Ports nothing listens on: bound to port 0 together (so that they differ), then closed. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

function get(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
  });
}

/** Polls `/_svc/health` until it answers 200; fails as soon as the runtime exits. */
async function waitHealthy(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      assert.fail(`the runtime exited (${child.exitCode ?? child.signalCode}):\n${output()}`);
    try {
      if ((await get(port, '/_svc/health')).status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What Nomad does to a task's strings before it starts the task. */
function interpolate(text: string, values: Record<string, string>): string {
  return text.replace(/\$\{(NOMAD_[A-Za-z0-9_]+)\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for ${whole}`);
    return value;
  });
}

describe('python -m svc.runtime in TCP mode (a Nomad raw_exec task)', function () {
  this.timeout(120_000);
  let hello: Workload;
  let image: BuiltImage;
  let child: ChildProcess | undefined;
  let taskDir: string | undefined;

  before(async () => {
    const manifest = await loadManifest({ target: quickstartApp });
    hello = manifest.spec.workloads.find((w) => w.name === 'hello')!;
    image = await createVenvBuilder({ cacheDir: testCacheDir, python: process.env.SVC_PYTHON ?? 'python3' }).build(hello.image, () => {});
  });

  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    child = undefined;
    if (taskDir) rmSync(taskDir, { recursive: true, force: true });
    taskDir = undefined;
  });

  it("serves /hello on each worker's port from the job's command and env, and exits 0 on SIGTERM", async () => {
    const workload: Workload = { ...hello, scaling: { ...hello.scaling, workers: 2 } };
    const job = compileJob(
      workload,
      jobContext({ app: 'quickstart', image: null, cluster: { driver: 'raw_exec', python: image.pythonPath } }),
    );
    const group = job.Job.TaskGroups[0]!;
    const task = group.Tasks[0]!;
    const labels = group.Networks![0]!.DynamicPorts!.map((port) => port.Label);
    assert.deepEqual(labels, ['w0', 'w1']);

    // The artifact: the bundle (a tar.gz of the project) unpacked into <task>/local/app.
    taskDir = tempDir('svc-nomad-task-');
    const bundle = path.join(taskDir, 'bundle.tar.gz');
    execFileSync('tar', ['-czf', bundle, '-C', path.dirname(quickstartApp), '.']);
    const appDir = path.join(taskDir, BUNDLE_DEST);
    mkdirSync(appDir, { recursive: true });
    execFileSync('tar', ['-xzf', bundle, '-C', appDir]);

    const ports = await freePorts(labels.length);
    const values: Record<string, string> = { NOMAD_TASK_DIR: path.join(taskDir, 'local') };
    labels.forEach((label, index) => {
      values[`NOMAD_PORT_${label}`] = String(ports[index]);
      values[`NOMAD_IP_${label}`] = '127.0.0.1';
    });
    const config = task.Config as { command: string; args: string[] };
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(task.Env ?? {})) env[name] = interpolate(value, values);
    assert.equal(env.SVC_WORKER_PORTS, ports.join(','));
    assert.equal(env.SVC_WORKER_HOST, '127.0.0.1');

    // The image venv holds the runtime's requirements; the svc package comes from the checkout, as for the local driver.
    child = spawn(
      config.command,
      config.args.map((arg) => interpolate(arg, values)),
      {
        cwd: taskDir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env, PYTHONPATH: sdkPythonPath },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });

    for (const port of ports) await waitHealthy(port, child, () => output);
    const answers = await Promise.all(ports.map((port) => get(port, '/hello?name=Nomad')));
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.body), { message: 'Hello, Nomad!' });
    }
    for (const [index, port] of ports.entries())
      assert.match(output, new RegExp(`listening on 127\\.0\\.0\\.1:${port} \\(worker ${index}, pid \\d+\\)`));

    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output);
    // Nothing listens on the ports any more.
    for (const port of ports) await assert.rejects(get(port, '/_svc/health'), /ECONNREFUSED/);
  });
});
