import assert from 'node:assert/strict';
import { validateManifest } from '../../../../../core/model/workload/manifest/parse.js';
import { parseManifest } from '../../../../../core/model/workload/resolve.js';
import { MAX_VOLUME_MOUNTS, mountPathProblem } from '../../../../../core/model/volume-mounts.js';
import { assertIssuesExactly } from './match-issues.js';
import { sampleManifest } from './sample-manifest.js';

function withVolumes(volumes: unknown): any {
  const manifest = sampleManifest() as any;
  manifest.workloads[0].volumes = volumes;
  return manifest;
}

describe("a workload's volumes (manifest `volumes`)", () => {
  it('validates, and the resolved workload keeps each mount; a workload without any has none', () => {
    const manifest = withVolumes([
      { path: '/data', volume: 'models', read_only: false },
      { path: '/srv/ro', volume: 'models', read_only: true },
    ]);
    assert.deepEqual(validateManifest(manifest), []);
    const { workloads } = parseManifest(manifest);
    assert.deepEqual(workloads[0]?.volumes, [
      { path: '/data', volume: 'models', readOnly: false },
      { path: '/srv/ro', volume: 'models', readOnly: true },
    ]);
    assert.equal(workloads[1]?.volumes, undefined);
  });

  it('says what is wrong with each mount, with its path', () => {
    const manifest = withVolumes([
      { path: 'data', volume: 'models', read_only: false },
      { path: '/', volume: 'models', read_only: false },
      { path: '/usr/share/models', volume: 'models', read_only: false },
      { path: '/tmp', volume: 'models', read_only: false },
      { path: '/data/../etc', volume: 'models', read_only: false },
      { path: '/models', volume: 'Not_A_Label', read_only: 'yes' },
      { path: '/models/small', volume: 'models', read_only: false },
      { path: '/models', volume: 'models', read_only: false, extra: 1 },
    ]);
    assertIssuesExactly(validateManifest(manifest), [
      { path: 'workloads[0].volumes[0].path', message: 'the mount path "data" is not absolute: mount a volume at a path such as "/data"' },
      {
        path: 'workloads[0].volumes[1].path',
        message: 'the mount path "/" is "/": a volume cannot replace the whole file system; mount it at a folder such as "/data"',
      },
      {
        path: 'workloads[0].volumes[2].path',
        message: 'the mount path "/usr/share/models" is in /usr, which the system needs: mount it at a folder such as "/data"',
      },
      {
        path: 'workloads[0].volumes[3].path',
        message: 'the mount path "/tmp" is /tmp itself: mount it at a folder inside, such as "/tmp/data", or at "/data"',
      },
      {
        path: 'workloads[0].volumes[4].path',
        message:
          'the mount path "/data/../etc" is not a plain absolute path: write it without "//", "." or "..", and without a trailing "/"',
      },
      {
        path: 'workloads[0].volumes[5].volume',
        message: '"Not_A_Label" has the upper-case letter "N"; names are lower case; try "not-a-label"',
      },
      { path: 'workloads[0].volumes[5].read_only', message: 'must be a boolean, got string' },
      {
        path: 'workloads[0].volumes[6].path',
        message: 'the mount path "/models/small" overlaps volumes[5].path "/models": give each volume its own folder',
      },
      { path: 'workloads[0].volumes[7].extra', message: 'unknown key' },
      {
        path: 'workloads[0].volumes[7].path',
        message: 'the mount path "/models" is also volumes[5].path "/models": give each volume its own folder',
      },
    ]);
  });

  it(`takes at most ${MAX_VOLUME_MOUNTS} mounts`, () => {
    const many = Array.from({ length: MAX_VOLUME_MOUNTS + 1 }, (_, i) => ({ path: `/v${i}`, volume: 'models', read_only: false }));
    assertIssuesExactly(validateManifest(withVolumes(many)), [
      { path: 'workloads[0].volumes', message: `mounts ${MAX_VOLUME_MOUNTS + 1} volumes; a workload mounts at most ${MAX_VOLUME_MOUNTS}` },
    ]);
  });

  it('allows a folder inside /tmp or /var, and names that merely start like a system folder', () => {
    for (const ok of ['/tmp/data', '/var/lib/models', '/usrdata', '/data/a.b', '/home/me/models'])
      assert.equal(mountPathProblem(ok), null, ok);
  });
});
