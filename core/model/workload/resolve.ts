/**
 * Manifest v1 (wire, snake_case) → the resolved model (camelCase, readonly,
 * defaults filled). No I/O, and the input manifest is left untouched.
 */
import { LRUCache } from 'lru-cache';
import { assertValidManifest } from './manifest/parse.js';
import type {
  AsgiOptions,
  AutoscalerOptions,
  EndpointOptions,
  ManifestCors,
  ManifestSchedule,
  ManifestV1,
  ManifestWorkload,
  RealtimeOptions,
  ServedOptions,
} from './manifest/types.js';
import { defaultScaling, optionDefaults } from './defaults.js';
import { deepFreeze } from './freeze.js';
import { parseMemoryMiB } from './memory.js';
import type { AppSpec, AutoscalerSpec, HttpSpec, ImageSpec, ScalingSpec, ScheduleSpec, Workload } from './types.js';

/**
 * Manifests parsed lately, by their JSON text: a spawned call sends its app's manifest with
 * every call (and the leader reads it again to run it), and checking one against the schema
 * costs more than a millisecond. What is cached is deep-frozen, so callers share it safely.
 */
// Bounded by the text they were parsed from too: a manifest may be up to the API's 1 MiB.
const parsed = new LRUCache<string, AppSpec>({ max: 64, maxSize: 8 * 1024 * 1024, sizeCalculation: (_spec, text) => text.length + 1 });

/** Validates any value as Manifest v1 (one `manifest_invalid` SvcError listing every issue) and resolves it. */
export function parseManifest(value: unknown): AppSpec {
  const text = JSON.stringify(value);
  const known = text === undefined ? undefined : parsed.get(text);
  if (known !== undefined) return known;
  assertValidManifest(value);
  const spec = resolveApp(value);
  if (text !== undefined) parsed.set(text, spec);
  return spec;
}

/** Resolves a manifest that already passed `validateManifest`. */
export function resolveApp(manifest: ManifestV1): AppSpec {
  const images = manifest.images.map(resolveImage);
  const imagesById = new Map(images.map((image) => [image.id, image]));
  const workloads = manifest.workloads.map((workload): Workload => {
    const image = imagesById.get(workload.image);
    if (image === undefined) throw new Error(`resolveApp: workload ${workload.name} uses unknown image ${workload.image}; validate first`);
    return resolveWorkload(manifest.app.name, workload, image);
  });
  return deepFreeze({
    name: manifest.app.name,
    entry: manifest.entry,
    sdkVersion: manifest.sdk_version,
    images,
    workloads,
  });
}

function resolveImage(image: ManifestV1['images'][number]): ImageSpec {
  return {
    id: image.id,
    pythonVersion: image.python_version,
    pythonPackages: [...image.python_packages],
    requirementsFiles: (image.requirements_files ?? []).map(({ name, content }) => ({ name, content })),
    env: { ...image.env },
  };
}

function resolveWorkload(app: string, workload: ManifestWorkload, image: ImageSpec): Workload {
  const { cpu, memory, gpu } = workload.options;
  const memoryMiB = parseMemoryMiB(memory);
  if (memoryMiB === null) throw new Error(`resolveApp: workload ${workload.name} has memory ${memory}; validate first`);
  const { http, scaling } = servingOf(workload);
  return {
    app,
    name: workload.name,
    kind: workload.kind,
    handler: workload.handler,
    onStart: workload.options.on_start,
    doc: workload.doc,
    image,
    resources: { cpu, memoryMiB, ...(gpu ? { gpu: { models: [...gpu.models], count: gpu.count } } : {}) },
    http,
    scaling,
    // Copies: the resolved model is frozen, the caller's manifest must not be.
    parameters: workload.parameters === null ? null : structuredClone(workload.parameters),
    returns: workload.returns === null ? null : structuredClone(workload.returns),
    ...(workload.secrets !== undefined && workload.secrets.length > 0 ? { secrets: [...workload.secrets] } : {}),
    ...(workload.volumes !== undefined && workload.volumes.length > 0
      ? { volumes: workload.volumes.map((mount) => ({ path: mount.path, volume: mount.volume, readOnly: mount.read_only })) }
      : {}),
    ...callLimitsOf(workload),
    ...(workload.kind === 'asgi' ? { openapi: workload.options.openapi } : {}),
    ...(workload.kind === 'function' ? { schedule: scheduleOf(workload.options.schedule ?? null) } : {}),
    ...((workload.kind === 'function' || workload.kind === 'endpoint') && workload.class !== undefined
      ? { class: structuredClone(workload.class) }
      : {}),
    ...callbackOf(workload),
  };
}

/** `timeout` of functions and endpoints, `retries` of functions; a manifest without them gets the defaults. */
function callLimitsOf(workload: ManifestWorkload): Pick<Workload, 'timeout' | 'retries'> {
  if (workload.kind === 'endpoint') return { timeout: workload.options.timeout ?? optionDefaults.timeout };
  if (workload.kind !== 'function') return {};
  const retries = workload.options.retries ?? null;
  return {
    timeout: workload.options.timeout ?? optionDefaults.timeout,
    retries: retries && {
      maxRetries: retries.max_retries,
      backoffCoefficient: retries.backoff_coefficient,
      initialDelay: retries.initial_delay,
      maxDelay: retries.max_delay,
    },
  };
}

/** `callback_url` of the kinds that have it, only when set (a spec without one is as it was before the option). */
function callbackOf(workload: ManifestWorkload): Pick<Workload, 'callbackUrl'> {
  const url = workload.kind === 'realtime' ? null : (workload.options.callback_url ?? null);
  return url === null ? {} : { callbackUrl: url };
}

function scheduleOf(schedule: ManifestSchedule | null): ScheduleSpec | null {
  if (schedule === null) return null;
  return 'every' in schedule
    ? { every: schedule.every, overlap: schedule.overlap }
    : { cron: schedule.cron.trim(), timezone: schedule.timezone, overlap: schedule.overlap };
}

function servingOf(workload: ManifestWorkload): { http: HttpSpec | null; scaling: ScalingSpec } {
  switch (workload.kind) {
    case 'function': {
      // One worker taking one call at a time, as always; the autoscaler bounds how many containers a backlog starts.
      const { autoscaler, checkpoint_enabled: checkpointEnabled, keep_warm_seconds: keepWarmSeconds } = workload.options;
      return {
        http: null,
        scaling: {
          ...defaultScaling,
          ...(autoscaler ? { autoscaler: resolveAutoscaler(autoscaler) } : {}),
          ...(checkpointEnabled === undefined ? {} : { checkpointEnabled }),
          ...(keepWarmSeconds === undefined ? {} : { keepWarmSeconds }),
          ...bufferOf(workload.options),
        },
      };
    }
    case 'endpoint': {
      const { options } = workload;
      return { http: endpointHttp(options), scaling: servedScaling(options, options.concurrency, options.keep_warm) };
    }
    case 'asgi':
    case 'realtime': {
      const { options } = workload;
      return { http: appHttp(options), scaling: servedScaling(options, options.concurrent_requests, options.keep_warm_seconds) };
    }
  }
}

function endpointHttp(options: EndpointOptions): HttpSpec {
  return {
    route: options.route,
    methods: [...options.methods],
    authorized: options.authorized,
    domain: options.domain,
    ...corsOf(options),
  };
}

/** ASGI apps and WebSocket handlers own every path and method below their root. */
function appHttp(options: RealtimeOptions | AsgiOptions): HttpSpec {
  return { route: '/', methods: [], authorized: options.authorized, domain: options.domain, ...('cors' in options ? corsOf(options) : {}) };
}

/** Only when set: a spec without it is as it was before the option. */
function corsOf(options: { readonly cors?: ManifestCors | null }): Pick<HttpSpec, 'cors'> {
  const cors = options.cors ?? null;
  if (cors === null) return {};
  return {
    cors: {
      origins: [...cors.origins],
      methods: cors.methods === null ? null : [...cors.methods],
      headers: [...cors.headers],
      credentials: cors.credentials,
      maxAge: cors.max_age,
    },
  };
}

/**
 * Scaling of every served kind. Only two option names differ: an endpoint says
 * `concurrency` and `keep_warm` where ASGI and realtime say
 * `concurrent_requests` and `keep_warm_seconds`; the caller passes those two.
 */
function servedScaling(options: ServedOptions, concurrency: number, keepWarmSeconds: number): ScalingSpec {
  return {
    workers: options.workers,
    concurrency,
    maxPendingTasks: options.max_pending_tasks,
    keepWarmSeconds,
    checkpointEnabled: options.checkpoint_enabled,
    autoscaler: resolveAutoscaler(options.autoscaler),
    ...bufferOf(options),
  };
}

/** Only when above 0: a spec without buffer containers is as it was before the option. */
function bufferOf(options: { readonly buffer_containers?: number }): Pick<ScalingSpec, 'bufferContainers'> {
  const buffer = options.buffer_containers ?? 0;
  return buffer > 0 ? { bufferContainers: buffer } : {};
}

function resolveAutoscaler(autoscaler: AutoscalerOptions): AutoscalerSpec {
  return {
    minContainers: autoscaler.min_containers,
    maxContainers: autoscaler.max_containers,
    tasksPerContainer: autoscaler.tasks_per_container,
  };
}
