import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { detectCgroups, detectOwnCgroups, type DetectInput } from '../../../../core/infra/processes/cgroups/detect.js';
import { parseMountinfo } from '../../../../core/infra/processes/cgroups/mountinfo.js';
import { parseSelfCgroup } from '../../../../core/infra/processes/cgroups/self-cgroup.js';
import { packageRoot } from '../../../../core/model/paths.js';
import { tempDir } from '../../../helpers/config.js';

const fixtures = path.join(packageRoot, 'test', 'fixtures', 'cgroups');
/** A machine's /proc/self/mountinfo and /proc/self/cgroup, as captured in test/fixtures/cgroups. */
function machine(name: string, controllersOf: DetectInput['controllersOf'] = () => null): DetectInput {
  const read = (ext: string) => readFileSync(path.join(fixtures, `${name}.${ext}`), 'utf8');
  return { mountinfo: read('mountinfo'), selfCgroup: read('cgroup'), under: null, controllersOf };
}

describe('cgroup detection', () => {
  describe('parseMountinfo()', () => {
    it('reads every mount of this machine, the root filesystem among them', () => {
      const mounts = parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8'));
      assert.ok(mounts.some((mount) => mount.mountPoint === '/'));
    });

    it('reads the fields after the separator and unescapes paths (\\040 is a space)', () => {
      const mounts = parseMountinfo(readFileSync(path.join(fixtures, 'v2-systemd.mountinfo'), 'utf8'));
      assert.deepEqual(
        mounts.find((m) => m.fsType === 'cgroup2'),
        { root: '/', mountPoint: '/sys/fs/cgroup', fsType: 'cgroup2', superOptions: ['rw', 'nsdelegate', 'memory_recursiveprot'] },
      );
      assert.ok(mounts.some((m) => m.mountPoint === '/mnt/my disk'));
    });

    it('names a line that is not in the format', () => {
      assert.throws(() => parseMountinfo('22 1 259:2 / / rw\n'), /mountinfo line 1 is not .*: 22 1 259:2 \/ \/ rw$/);
    });
  });

  describe('parseSelfCgroup()', () => {
    it("reads the unified path and each v1 controller's, co-mounted ones included", () => {
      const membership = parseSelfCgroup(readFileSync(path.join(fixtures, 'hybrid-cpu-cpuacct.cgroup'), 'utf8'));
      assert.equal(membership.unified, '/docker/abc123');
      assert.equal(membership.v1.get('cpu'), '/docker/abc123/worker');
      assert.equal(membership.v1.get('cpuacct'), '/docker/abc123/worker');
      assert.equal(membership.v1.get('name=systemd'), '/docker/abc123');
    });

    it('names a line that is not in the format', () => {
      assert.throws(
        () => parseSelfCgroup('0::/\nmemory:/x\n'),
        /\/proc\/self\/cgroup line 2 is not "<id>:<controllers>:<path>": memory:\/x/,
      );
    });
  });

  describe('detectCgroups()', () => {
    it("picks v1 when the cgroup2 mount offers no controllers: separate cpu, cpuacct and memory hierarchies, each at svc's own path", () => {
      const detection = detectCgroups(machine('v1-split', () => []));
      assert.ok('layout' in detection);
      assert.equal(detection.layout.files.version, 1);
      assert.deepEqual(detection.layout.own, {
        cpu: '/sys/fs/cgroup/cpu',
        memory: '/sys/fs/cgroup/memory/session/42',
        cpuacct: '/sys/fs/cgroup/cpuacct',
      });
    });

    it("finds svc's cgroup below a mount that shows only part of the hierarchy (a container's bind mount), cpu and cpuacct co-mounted", () => {
      const detection = detectCgroups(machine('hybrid-cpu-cpuacct'));
      assert.ok('layout' in detection);
      assert.deepEqual(detection.layout.own, {
        cpu: '/sys/fs/cgroup/cpu,cpuacct/worker',
        memory: '/sys/fs/cgroup/memory/worker',
        cpuacct: '/sys/fs/cgroup/cpu,cpuacct/worker',
      });
    });

    it("picks v2 when svc's cgroup there offers cpu and memory (a real cgroup.controllers file)", () => {
      const root = tempDir('svc-cgroup2-');
      const own = path.join(root, 'system.slice', 'svc.service');
      mkdirSync(own, { recursive: true });
      writeFileSync(path.join(own, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
      const detection = detectCgroups({
        mountinfo: `26 24 0:24 / ${root} rw,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n`,
        selfCgroup: '0::/system.slice/svc.service\n',
        under: null,
      });
      assert.ok('layout' in detection);
      assert.equal(detection.layout.files.version, 2);
      assert.deepEqual(detection.layout.own, { cpu: own, memory: own, cpuacct: own });
    });

    it('says why when neither version can hold the limits', () => {
      const detection = detectCgroups({ ...machine('v2-systemd', () => ['cpu', 'io']) });
      assert.deepEqual(detection, {
        unavailable:
          "cgroup2 at /sys/fs/cgroup has no memory controller for svc's cgroup, and no cgroup v1 cpu and memory hierarchy is mounted",
      });
    });

    it('only looks below `under` when given', () => {
      assert.deepEqual(detectCgroups({ ...machine('v1-split', () => []), under: '/sys/fs/cgroup/memory' }), {
        unavailable:
          'no cgroup2 filesystem is mounted under /sys/fs/cgroup/memory, and no cgroup v1 cpu hierarchy is mounted under /sys/fs/cgroup/memory',
      });
    });

    it('on this machine: either folders that exist or a reason', () => {
      const detection = detectOwnCgroups(null);
      if ('unavailable' in detection) assert.match(detection.unavailable, /\w/);
      else for (const dir of Object.values(detection.layout.own)) if (dir !== null) assert.ok(existsSync(dir), dir);
    });
  });
});
