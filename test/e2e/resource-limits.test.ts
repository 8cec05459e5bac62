import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { detectOwnCgroups } from '../../core/infra/processes/cgroups/detect.js';
import { distinctFolders } from '../../core/infra/processes/cgroups/container-cgroup.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { localDriverOf } from '../helpers/local-driver.js';
import { until } from '../helpers/until.js';

const resourcesApp = path.join(packageRoot, 'test', 'fixtures', 'apps', 'resources.py');

async function deploy(platform: Platform): Promise<Deployment> {
  const manifest = await loadManifest({ target: resourcesApp });
  return platform.deployments.deploy({
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage: 'preview',
    principal: null,
  });
}

/** The cpu and memory options, held by each container's cgroup (real processes, real cgroups). */
describe('cpu and memory limits of local containers (cgroups)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let deployment: Deployment;
  const url = (name: string) => deployment.workloads.find((w) => w.name === name)!.url!;
  const unitOf = (name: string) => deployment.workloads.find((w) => w.name === name)!.unit!;

  before(async function () {
    platform = await startPlatform({ config: testConfig() });
    const limits = localDriverOf(platform).resourceLimits!;
    if (!limits.enforced) {
      await platform.close();
      this.skip(); // e.g. not root: the warning test below covers this case
    }
    deployment = await deploy(platform);
  });
  after(async () => platform?.close());

  it('stops a worker that allocates past memory="128Mi" with memory_limit_exceeded, logs why, and serves the next request from a fresh worker', async () => {
    const before = (await (await fetch(url('hog'))).json()) as { pid: number };
    const killed = await fetch(`${url('hog')}?mib=400`);
    assert.equal(killed.status, 502);
    const { error } = (await killed.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'memory_limit_exceeded');
    assert.match(error.message, /memory="128Mi"/);

    // The supervisor restarts the worker; the driver registers the replacement once it answers.
    const driver = localDriverOf(platform);
    await until('a fresh worker is registered', () => {
      const worker = driver.status(unitOf('hog'))[0]?.workers[0];
      return worker?.registered && worker.pid !== undefined && worker.pid !== before.pid;
    });
    const after = await fetch(url('hog'));
    assert.equal(after.status, 200);
    const fresh = (await after.json()) as { pid: number };
    assert.notEqual(fresh.pid, before.pid, 'a fresh worker serves');
    const lines = platform.deploymentLogs.lines({ workspace: DEFAULT_WORKSPACE, app: 'resources', stage: 'preview', workload: 'hog' });
    assert.ok(
      lines.some(
        (line) =>
          line.stream === 'system' &&
          /worker 0 of container c-\w+ was killed by the kernel: the container went past its memory limit \(memory="128Mi"\)/.test(
            line.text,
          ),
      ),
      lines.map((line) => line.text).join('\n'),
    );
  });

  it("gives a busy loop under cpu=0.25 about a quarter of a core, by its cgroup's own accounting", async () => {
    const driver = localDriverOf(platform);
    const [container] = driver.status(unitOf('spin'));
    const cgroup = driver.cgroup(container!.id)!;
    const usage = () => ({ cpu: cgroup.cpuUsageMicros()!, wall: Number(process.hrtime.bigint() / 1000n) });
    const start = usage();
    const answer = await fetch(`${url('spin')}?seconds=2`);
    assert.equal(answer.status, 200);
    const end = usage();
    const ratio = (end.cpu - start.cpu) / (end.wall - start.wall);
    // The quota is a cap: at most about a quarter of a core. On a machine busy with other tests the loop may
    // get less than its quota (seen: 0.12 under the full suite), so the lower bound only shows it was busy.
    assert.ok(ratio > 0.05 && ratio < 0.35, `the container used ${ratio.toFixed(3)} of a core`);
  });

  it("puts a container forked from its checkpoint template, and its workers, into the container's cgroup", async () => {
    const driver = localDriverOf(platform);
    const [container] = driver.status(unitOf('forked'));
    assert.equal(container!.startedFrom, 'template');
    const pids = [container!.pid, ...container!.workers.map((worker) => worker.pid)].map(String);
    for (const file of driver.cgroup(container!.id)!.procsFiles) {
      const members = readFileSync(file, 'utf8').split('\n');
      assert.deepEqual(
        pids.filter((pid) => !members.includes(pid)),
        [],
        file,
      );
    }
  });

  it('kills what a container left behind in its cgroup when it stops: a subprocess in a session of its own', async () => {
    const { pid } = (await (await fetch(url('escapee'))).json()) as { pid: number };
    const running = () => existsSync(`/proc/${pid}`) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    assert.ok(running(), "the subprocess runs, outside the worker's process group");
    const driver = localDriverOf(platform);
    const [container] = driver.status(unitOf('escapee'));
    await driver.stop(unitOf('escapee'), container!.id);
    await until('the subprocess is gone with its container', () => !running());
  });

  it("removes a container's cgroup when the container ends", async () => {
    const driver = localDriverOf(platform);
    const [container] = driver.status(unitOf('spin'));
    const folders = driver.cgroup(container!.id)!.procsFiles.map((file) => path.dirname(file));
    await driver.stop(unitOf('spin'), container!.id);
    await until("the container's cgroup folders are gone", () => folders.every((folder) => !existsSync(folder)));
  });
});

describe('cgroups left by an svc that died', function () {
  this.timeout(60_000);
  let platform: Platform | undefined;
  after(async () => platform?.close());

  it('are removed when the next svc starts, and those of another pid namespace are left alone', async function () {
    const detection = detectOwnCgroups(null);
    if ('unavailable' in detection) this.skip();
    // A pid that no process has any more: a child that already exited.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const namespace = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))![1]!;
    const own = (detection as Exclude<typeof detection, { unavailable: string }>).layout.own;
    const stale = distinctFolders(own).map((dir) => path.join(dir, 'svc', `${namespace}-${dead}-0badc0de`, 'c-stale'));
    // The same pid in another namespace may be a live svc (in a container sharing this cgroup).
    const foreign = distinctFolders(own).map((dir) => path.join(dir, 'svc', `1-${dead}-0badc0de`));
    try {
      for (const folder of [...stale, ...foreign]) mkdirSync(folder, { recursive: true });
    } catch {
      this.skip(); // not writable here: nothing to sweep either
    }
    try {
      platform = await startPlatform({ config: testConfig() });
      await until("the dead svc's cgroups are gone", () => stale.every((folder) => !existsSync(path.dirname(folder))));
      assert.ok(
        foreign.every((folder) => existsSync(folder)),
        'the folder of another pid namespace stays',
      );
    } finally {
      for (const folder of foreign) rmdirSync(folder); // a cgroup folder goes with rmdir, its files with it
    }
  });
});

describe('cpu and memory where no cgroup can be made', function () {
  this.timeout(180_000);
  let platform: Platform | undefined;
  after(async () => platform?.close());

  it("says once, in the deploy's warnings, that they are not limited and why", async () => {
    const root = tempDir('svc-no-cgroups-');
    platform = await startPlatform({ config: testConfig({ cgroupRoot: root }) });
    const deployment = await deploy(platform);
    const limits = deployment.warnings.filter((line) => /cpu|memory/.test(line));
    assert.deepEqual(limits, [
      `cpu and memory are not limited on this machine (no cgroup2 filesystem is mounted under ${root}, and no cgroup v1 cpu and memory hierarchy is mounted under ${root}): hog sets memory="128Mi"; spin sets cpu=0.25`,
    ]);
  });
});
