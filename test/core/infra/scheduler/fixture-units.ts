import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import { createVenvBuilder } from '../../../../core/infra/images/venv-builder.js';
import { packageRoot } from '../../../../core/model/paths.js';
import type { DeploymentUnit } from '../../../../core/infra/scheduler/types.js';
import type { ScalingSpec, Workload } from '../../../../core/model/workload/types.js';
import { testCacheDir } from '../../../helpers/config.js';

/** test/fixtures/scheduler: each module there is an app (`workers`, `checkpoint`, `broken_start`), in a folder of their own. */
export const fixtureAppsRoot = path.join(packageRoot, 'test', 'fixtures', 'scheduler');

const python = process.env.SVC_PYTHON ?? 'python3';

/** The runtime image of this machine's Python (cached across runs). */
export async function runtimeImage(): Promise<BuiltImage> {
  const version = execFileSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).trim();
  return createVenvBuilder({ cacheDir: testCacheDir, python }).build(
    { id: 'img-fixtures', pythonVersion: version, pythonPackages: [], requirementsFiles: [], env: {} },
    () => {},
  );
}

/**
 * A unit of a fixture app's workload, built by hand: the driver reads only
 * the name and the scaling, so these tests need no manifest.
 */
export function fixtureUnit(image: BuiltImage, entry: string, name: string, scaling: Partial<ScalingSpec>): DeploymentUnit {
  const workload: Workload = {
    app: entry,
    name,
    kind: 'endpoint',
    handler: name,
    onStart: null,
    doc: null,
    image: { id: image.imageId, pythonVersion: '', pythonPackages: [], requirementsFiles: [], env: {} },
    resources: { cpu: 1, memoryMiB: 512 },
    http: { route: `/${name}`, methods: ['GET'], authorized: false, domain: null },
    scaling: {
      workers: 1,
      concurrency: 1,
      maxPendingTasks: 100,
      keepWarmSeconds: 60,
      checkpointEnabled: false,
      autoscaler: { minContainers: 0, maxContainers: 4, tasksPerContainer: 1 },
      ...scaling,
    },
    parameters: null,
    returns: null,
  };
  return {
    key: `default/${entry}/preview/${name}`,
    ref: { workspace: 'default', app: entry, stage: 'preview' },
    workload,
    image,
    source: { root: fixtureAppsRoot, entry },
  };
}

/**
 * A fresh folder for what fixture apps record, named in the environment
 * the containers inherit (the driver passes this process's environment on).
 */
export function recordDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-record-'));
  process.env.SVC_TEST_RECORD_DIR = dir;
  return dir;
}

/** The pids on_start recorded for `name`, one per call. */
export function onStartCalls(dir: string, name: string): number[] {
  try {
    return readFileSync(path.join(dir, `${name}.on_start`), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}
