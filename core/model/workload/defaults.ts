/**
 * The platform's default options, in the wire form docs/manifest.md shows in
 * brackets. The SDK fills these in itself; the platform needs them for what the
 * manifest does not carry (a function's scaling) and for docs and tests.
 */
import type { AutoscalerOptions } from './manifest/types.js';
import { deepFreeze } from './freeze.js';
import type { ScalingSpec } from './types.js';

export const optionDefaults = deepFreeze({
  cpu: 1.0,
  memory: '512Mi',
  gpu: null,
  route: '/',
  methods: ['GET', 'POST'],
  workers: 1,
  concurrency: 1,
  concurrent_requests: 1,
  autoscaler: { max_containers: 1, tasks_per_container: 1, min_containers: 0 } satisfies AutoscalerOptions,
  buffer_containers: 0,
  max_pending_tasks: 100,
  checkpoint_enabled: false,
  authorized: true,
  domain: null,
  keep_warm: 60,
  keep_warm_seconds: 60,
  openapi: '/openapi.json',
  on_start: null,
  // Five minutes, as Modal's functions: long enough for real work, short enough that a stuck call ends.
  timeout: 300,
  retries: null,
  schedule: null,
  callback_url: null,
  cors: null,
});

/** Scaling of workloads whose manifest has no scaling options (functions). */
export const defaultScaling: ScalingSpec = deepFreeze({
  workers: optionDefaults.workers,
  concurrency: optionDefaults.concurrency,
  maxPendingTasks: optionDefaults.max_pending_tasks,
  keepWarmSeconds: optionDefaults.keep_warm,
  checkpointEnabled: optionDefaults.checkpoint_enabled,
  autoscaler: {
    minContainers: optionDefaults.autoscaler.min_containers,
    maxContainers: optionDefaults.autoscaler.max_containers,
    tasksPerContainer: optionDefaults.autoscaler.tasks_per_container,
  },
});
