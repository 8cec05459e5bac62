/**
 * The rules of Manifest v1 in one table: which options each kind has, their
 * types and ranges, the allowed HTTP methods, and the route and hostname
 * rules (the name rule is svc's one rule of core/model/names.ts,
 * re-exported here). The validator, the job compiler and the docs read these;
 * change a rule here, in docs/manifest.md and in the SDK
 * (sdk/python/svc/_options.py) together: test/core/model/workload/rules.test.ts
 * checks this table against the docs, sdk-parity.test.ts against the SDK.
 */
import type { WorkloadKind } from './types.js';

export const workloadKinds: readonly WorkloadKind[] = Object.freeze(['function', 'endpoint', 'asgi', 'realtime']);

export const httpMethods = Object.freeze(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const);

/** Paths the runtime answers itself (`/_svc/health`); no route may be this or under it. */
export const reservedRoutePrefix = '/_svc';

/**
 * App and workload names follow svc's one naming rule (a lowercase DNS label),
 * which lives in core/model/names.ts (`nameProblem`, `NAME_RULE`): they end
 * up in URLs, Nomad job ids and Consul service names.
 */
export { NAME_RULE as nameRule, nameProblem } from '../names.js';

export const imageIdRule = Object.freeze({
  pattern: /^img-[0-9a-f]{16}$/,
  text: '"img-" followed by 16 lower-case hex digits',
});

export const pythonVersionRule = Object.freeze({ pattern: /^\d+\.\d+$/, text: 'major.minor, like "3.11"' });

/** `entry` is a module path: dotted Python identifiers. */
export const entryRule = Object.freeze({
  pattern: /^[\p{L}_][\p{L}\p{N}_]*(\.[\p{L}_][\p{L}\p{N}_]*)*$/u,
  text: 'a dotted Python module name, like "app" or "pkg.app"',
});

export const memoryRule = Object.freeze({ minMiB: 64, maxMiB: 256 * 1024, text: '"<integer>Mi" or "<integer>Gi"' });

export type OptionRule =
  | { readonly type: 'number'; readonly min: number; readonly max: number }
  | { readonly type: 'integer'; readonly min: number; readonly max: number }
  | { readonly type: 'boolean' }
  | { readonly type: 'memory' }
  /** `gpu`: null, or `{models, count}`: model names tried in order (core/model/gpus), GPUs per container. */
  | { readonly type: 'gpu' }
  | { readonly type: 'route' }
  /** `openapi`: null, or the ASGI app's path of its OpenAPI description, under the rules of a route. */
  | { readonly type: 'openapi' }
  | { readonly type: 'methods' }
  | { readonly type: 'domain' }
  | { readonly type: 'autoscaler' }
  /** `on_start`: null, or the name (`__qualname__`) of the callable the SDK runs once per worker. */
  | { readonly type: 'callable' }
  /** `retries`: null, or an object with every field of `retriesRules`. */
  | { readonly type: 'retries' }
  /** `schedule`: null, `{cron, timezone, overlap}` or `{every, overlap}` (core/model/workload/schedule.ts). */
  | { readonly type: 'schedule' }
  /** `callback_url`: null, or an absolute http(s) URL without credentials (core/model/callback-url.ts). */
  | { readonly type: 'callbackUrl' }
  /** `cors`: null, or `{origins, methods, headers, credentials, max_age}` (core/model/cors.ts). */
  | { readonly type: 'cors' };

const all = ['function', 'endpoint', 'asgi', 'realtime'] as const;
const served = ['endpoint', 'asgi', 'realtime'] as const;
const apps = ['asgi', 'realtime'] as const;
/** Functions scale on their backlog too (a `.map`'s inputs: core/services/maps). */
const scaled = ['function', 'endpoint', 'asgi', 'realtime'] as const;

/**
 * The options table of docs/manifest.md, row by row: each option's rule and
 * the kinds that have it. ASGI and realtime say `concurrent_requests` and
 * `keep_warm_seconds` where an endpoint says `concurrency` and `keep_warm`.
 */
export const optionTable = Object.freeze({
  cpu: { kinds: all, rule: { type: 'number', min: 0.125, max: 64 } },
  memory: { kinds: all, rule: { type: 'memory' } },
  gpu: { kinds: all, rule: { type: 'gpu' } },
  route: { kinds: ['endpoint'], rule: { type: 'route' } },
  methods: { kinds: ['endpoint'], rule: { type: 'methods' } },
  workers: { kinds: served, rule: { type: 'integer', min: 1, max: 64 } },
  concurrency: { kinds: ['endpoint'], rule: { type: 'integer', min: 1, max: 1000 } },
  concurrent_requests: { kinds: apps, rule: { type: 'integer', min: 1, max: 1000 } },
  autoscaler: { kinds: scaled, rule: { type: 'autoscaler' } },
  buffer_containers: { kinds: scaled, rule: { type: 'integer', min: 0, max: 1000 } },
  max_pending_tasks: { kinds: served, rule: { type: 'integer', min: 0, max: 100_000 } },
  checkpoint_enabled: { kinds: scaled, rule: { type: 'boolean' } },
  authorized: { kinds: served, rule: { type: 'boolean' } },
  domain: { kinds: served, rule: { type: 'domain' } },
  keep_warm: { kinds: ['endpoint'], rule: { type: 'integer', min: 0, max: 86_400 } },
  keep_warm_seconds: { kinds: ['function', ...apps], rule: { type: 'integer', min: 0, max: 86_400 } },
  openapi: { kinds: ['asgi'], rule: { type: 'openapi' } },
  on_start: { kinds: all, rule: { type: 'callable' } },
  timeout: { kinds: ['function', 'endpoint'], rule: { type: 'number', min: 1, max: 86_400 } },
  retries: { kinds: ['function'], rule: { type: 'retries' } },
  schedule: { kinds: ['function'], rule: { type: 'schedule' } },
  callback_url: { kinds: ['function', 'endpoint', 'asgi'], rule: { type: 'callbackUrl' } },
  cors: { kinds: ['endpoint', 'realtime'], rule: { type: 'cors' } },
} as const satisfies Record<string, { kinds: readonly WorkloadKind[]; rule: OptionRule }>);

export type OptionName = keyof typeof optionTable;

/** Options added after Manifest v1 first shipped: a manifest of an older SDK may leave them out (their default applies). */
export const laterOptions: ReadonlySet<OptionName> = new Set<OptionName>([
  'timeout',
  'retries',
  'schedule',
  'callback_url',
  'cors',
  'buffer_containers',
  'gpu',
]);

/** Options a kind got after Manifest v1 first shipped, though other kinds had them from the start: a function's `autoscaler`. */
export const laterOptionsByKind: Readonly<Partial<Record<WorkloadKind, ReadonlySet<OptionName>>>> = Object.freeze({
  function: new Set<OptionName>(['autoscaler', 'checkpoint_enabled', 'keep_warm_seconds']),
});

const optionNames = Object.keys(optionTable) as OptionName[];

/** Exactly the options each kind has, in table order (the SDK writes all of them, defaults filled in). */
export const optionsByKind: Readonly<Record<WorkloadKind, readonly OptionName[]>> = Object.freeze(
  Object.fromEntries(
    workloadKinds.map((kind) => [
      kind,
      Object.freeze(optionNames.filter((name) => (optionTable[name].kinds as readonly WorkloadKind[]).includes(kind))),
    ]),
  ) as Record<WorkloadKind, readonly OptionName[]>,
);

/** The fields of a `retries` object (`svc.Retries`), all required; `max_retries` has no default. */
export const retriesRules = Object.freeze({
  max_retries: { min: 0, max: 10, integer: true },
  backoff_coefficient: { min: 1, max: 10, integer: false },
  initial_delay: { min: 0, max: 60, integer: false },
  max_delay: { min: 1, max: 60, integer: false },
} as const);

export type RetriesKey = keyof typeof retriesRules;

/** `min_containers` is further bounded by `max_containers`. */
export const autoscalerRules = Object.freeze({
  max_containers: { min: 1, max: 1000 },
  tasks_per_container: { min: 1, max: 10_000 },
  min_containers: { min: 0, max: 1000 },
} as const);

export type AutoscalerKey = keyof typeof autoscalerRules;

/** asgi wraps an object, not a function: no handler name and no signature. */
export const hasSignature = (kind: WorkloadKind): boolean => kind !== 'asgi';

export const workloadKeys = Object.freeze([
  'name',
  'kind',
  'handler',
  'image',
  'doc',
  'options',
  'parameters',
  'returns',
  'secrets',
  'volumes',
  'class',
] as const);
/**
 * Keys of `workloadKeys` a workload may leave out: `secrets`, the names of the secrets its
 * workers get, is written only when there are some (and manifests older than it validate);
 * `volumes`, the volumes its containers mount, likewise;
 * `class`, only for a function that is an `@app.cls` class.
 */
export const optionalWorkloadKeys: ReadonlySet<string> = new Set(['secrets', 'volumes', 'class']);
/** A method name of an `@app.cls` class, as the SDK writes it in the manifest's `class` block: a Python identifier. */
export const methodNameRule = Object.freeze({
  pattern: /^[\p{L}_][\p{L}\p{N}_]*$/u,
  text: 'a Python identifier, like "predict"',
});
/** At most this many `@svc.method()` (and as many `@svc.enter()`) methods per class. */
export const MAX_CLASS_METHODS = 64;
/** At most this many secrets per workload. */
export const MAX_WORKLOAD_SECRETS = 32;
/** How a workload names entry `i` of its app's inline values (`svc.Secret.from_dict`), sent beside the manifest. */
export const INLINE_SECRET_REF = /^@(\d{1,3})$/;
export const imageKeys = Object.freeze(['id', 'python_version', 'python_packages', 'requirements_files', 'env'] as const);
/**
 * Keys of `imageKeys` an image may leave out: the SDK writes them only when not empty, so an
 * image without them keeps the id (and the manifest the bytes) it had before they existed.
 */
export const optionalImageKeys: ReadonlySet<string> = new Set(['requirements_files', 'env']);
/**
 * `requirements_files`: the text of each requirements file an image installs
 * (`Image.pip_install_from_requirements`), under the file's base name. The SDK reads at most
 * `maxBytes` of a file; the schema counts characters, which are never more than its bytes.
 */
export const requirementsFileRule = Object.freeze({
  maxFiles: 32,
  maxChars: 256 * 1024,
  name: /^(?!\.\.?$)[^/\\\u0000]{1,255}$/,
  nameText: 'a file name without a folder, like "requirements.txt"',
});
/** An image's `env` holds at most this many variables. */
export const MAX_IMAGE_ENV = 100;
export const manifestKeys = Object.freeze(['manifest_version', 'sdk_version', 'entry', 'app', 'images', 'workloads'] as const);
export const appKeys = Object.freeze(['name'] as const);

/** What is wrong with a route, or [] when it is fine. */
export function routeProblems(route: string): string[] {
  const problems: string[] = [];
  if (!route.startsWith('/')) problems.push('must start with "/"');
  if (route.includes('?')) problems.push('must not contain "?"');
  if (route.includes('#')) problems.push('must not contain "#"');
  if (/\s/.test(route)) problems.push('must not contain whitespace');
  if (route.includes('//')) problems.push('must not contain "//"');
  if (route.split('/').some((segment) => segment === '.' || segment === '..')) {
    problems.push('must not contain "." or ".." segments');
  }
  // The gateway compares routes with the raw request path, so a route must need no percent-encoding.
  if (!/^[A-Za-z0-9._~!$&'()*+,;=:@/-]*$/.test(route)) {
    problems.push("may only contain letters, digits and - . _ ~ ! $ & ' ( ) * + , ; = : @ / (nothing that needs percent-encoding)");
  }
  if (route === reservedRoutePrefix || route.startsWith(`${reservedRoutePrefix}/`)) {
    problems.push(`must not be under ${reservedRoutePrefix}/, which svc reserves for itself`);
  }
  return problems;
}

const hostnameLabel = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Custom domains: a lower-case DNS name with at least one dot, RFC 1123 labels. */
export function isDomainName(host: string): boolean {
  if (host.length > 253) return false;
  const labels = host.split('.');
  return labels.length >= 2 && labels.every((label) => hostnameLabel.test(label));
}
