/** Workloads and contexts for the job compiler tests, and golden-file comparison (SVC_UPDATE_GOLDEN=1 rewrites). */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import type { Workload, WorkloadKind } from '../../core/model/workload/types.js';
import { defaultClusterSettings, type ClusterSettings, type JobContext } from '../../jobs/context.js';

export const goldenDir = path.join(packageRoot, 'test', 'fixtures', 'jobs');
const update = process.env.SVC_UPDATE_GOLDEN === '1';

type Overrides = Partial<Omit<Workload, 'scaling' | 'resources' | 'http'>> & {
  scaling?: Partial<Omit<Workload['scaling'], 'autoscaler'>> & { autoscaler?: Partial<Workload['scaling']['autoscaler']> };
  resources?: Partial<Workload['resources']>;
  http?: Partial<NonNullable<Workload['http']>> | null;
};

const httpByKind: Record<WorkloadKind, Workload['http']> = {
  function: null,
  endpoint: { route: '/hello', methods: ['GET'], authorized: true, domain: null },
  asgi: { route: '/', methods: [], authorized: true, domain: null },
  realtime: { route: '/', methods: [], authorized: true, domain: null },
};

export function workload(kind: WorkloadKind, overrides: Overrides = {}): Workload {
  const baseHttp = httpByKind[kind];
  const { scaling, resources, http, ...rest } = overrides;
  return {
    app: 'shop',
    name: kind === 'function' ? 'square' : kind === 'endpoint' ? 'hello' : kind === 'asgi' ? 'web' : 'chat',
    kind,
    handler: kind === 'asgi' ? null : 'handler',
    onStart: null,
    doc: null,
    image: { id: 'img-0123456789abcdef', pythonVersion: '3.11', pythonPackages: [], requirementsFiles: [], env: {} },
    resources: { cpu: 1, memoryMiB: 512, ...resources },
    http: http === null || baseHttp === null ? null : { ...baseHttp, ...http },
    scaling: {
      workers: 1,
      concurrency: 1,
      maxPendingTasks: 100,
      keepWarmSeconds: 60,
      checkpointEnabled: false,
      ...scaling,
      autoscaler: { minContainers: 0, maxContainers: 10, tasksPerContainer: 1, ...scaling?.autoscaler },
    },
    parameters: null,
    returns: null,
    ...rest,
  };
}

export function jobContext(overrides: Partial<Omit<JobContext, 'cluster'>> & { cluster?: Partial<ClusterSettings> } = {}): JobContext {
  const { cluster, ...rest } = overrides;
  return {
    workspace: 'default',
    app: 'shop',
    stage: 'deployed',
    version: 3,
    entry: 'app',
    bundle: { url: 'https://svc.example.com/api/v1/bundles/abc.tar.gz?expires=1700000000&signature=deadbeef', sha256: 'ab'.repeat(32) },
    image: 'registry.example.com/svc/img-0123456789abcdef:latest',
    ...rest,
    cluster: { ...defaultClusterSettings, ...cluster },
  };
}

/** Compares `value` as pretty JSON with test/fixtures/jobs/<name>.json, or writes it with SVC_UPDATE_GOLDEN=1. */
export function assertGolden(name: string, value: unknown): void {
  const file = path.join(goldenDir, `${name}.json`);
  const text = `${JSON.stringify(value, null, 2)}\n`;
  if (update || !existsSync(file)) {
    if (!update)
      assert.fail(`missing golden file ${path.relative(packageRoot, file)}: run the tests with SVC_UPDATE_GOLDEN=1 and read the new file`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return;
  }
  assert.equal(
    text,
    readFileSync(file, 'utf8'),
    `${name}.json differs from the compiler's output (SVC_UPDATE_GOLDEN=1 rewrites it; then read the diff)`,
  );
}
