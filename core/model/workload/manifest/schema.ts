/**
 * Manifest v1 as a JSON Schema (2020-12), built from the rule table of
 * core/model/workload/rules.ts: the one declaration that validates manifests
 * (core/model/workload/manifest/parse.ts) and that `npm run manifest-schema` publishes as
 * docs/manifest.schema.json. What a schema cannot say (names, routes, cron,
 * ids resolved against each other) is an `x-svc-check` of core/model/workload/manifest/checks.ts.
 */
import { MAX_CALLBACK_URL_LENGTH } from '../../callback-url.js';
import type { SchemaObject } from '../../schema/ajv.js';
import {
  MAX_CLASS_METHODS,
  MAX_IMAGE_ENV,
  MAX_WORKLOAD_SECRETS,
  autoscalerRules,
  entryRule,
  hasSignature,
  httpMethods,
  imageIdRule,
  type imageKeys,
  laterOptions,
  laterOptionsByKind,
  type manifestKeys,
  memoryRule,
  methodNameRule,
  optionTable,
  optionalImageKeys,
  optionalWorkloadKeys,
  optionsByKind,
  pythonVersionRule,
  requirementsFileRule,
  retriesRules,
  type workloadKeys,
  workloadKinds,
  type OptionRule,
} from '../rules.js';
import { MAX_CLASS_PARAMETERS, classParameterTypes } from '../class-parameters.js';
import { PERIOD_RANGE } from '../schedule.js';
import { CORS_LIMITS, HEADER_NAME } from '../../cors.js';
import { MAX_MOUNT_PATH_CHARS, MAX_VOLUME_MOUNTS } from '../../volume-mounts.js';
import { GPU_MODEL_MAX_CHARS, GPU_MODEL_PATTERN } from '../../gpus/gpu-names.js';
import { gpuRules } from '../../gpus/gpu-request.js';
import type { WorkloadKind } from '../types.js';

export const manifestSchemaId = 'urn:svc:manifest:v1';

const nonEmptyString = { type: 'string', pattern: '\\S', 'x-svc-messages': { pattern: 'must not be empty' } };
const objectOrNull = (message: string): SchemaObject => ({
  type: ['null', 'object'],
  'x-svc-messages': { type: `${message}, got {type}` },
});

function range(type: 'number' | 'integer', rule: { readonly min: number; readonly max: number }): SchemaObject {
  return { type, minimum: rule.min, maximum: rule.max };
}

/** Exactly these `properties`, every one required unless `optional` (for a value that is an object). */
function closedKeys(properties: Record<string, SchemaObject | boolean>, optional: ReadonlySet<string> = new Set()): SchemaObject {
  return { required: Object.keys(properties).filter((key) => !optional.has(key)), additionalProperties: false, properties };
}

/** An object with exactly `properties`, every one required unless `optional`. */
function closedObject(properties: Record<string, SchemaObject | boolean>, optional: ReadonlySet<string> = new Set()): SchemaObject {
  return { type: 'object', ...closedKeys(properties, optional) };
}

const autoscaler = {
  ...closedObject(Object.fromEntries(Object.entries(autoscalerRules).map(([key, rule]) => [key, range('integer', rule)]))),
  'x-svc-check': 'autoscaler',
};

const retries = {
  ...closedObject(
    Object.fromEntries(Object.entries(retriesRules).map(([key, rule]) => [key, range(rule.integer ? 'integer' : 'number', rule)])),
  ),
  ...objectOrNull('must be an object'),
};

/** null, `{every, overlap}` (a period in seconds) or `{cron, timezone, overlap}`. */
const schedule = {
  ...objectOrNull('must be an object'),
  if: { required: ['every'] },
  then: closedKeys({ every: range('integer', PERIOD_RANGE), overlap: { type: 'boolean' } }),
  else: closedKeys({
    cron: { type: 'string', 'x-svc-check': 'cron' },
    timezone: { type: 'string', 'x-svc-check': 'timezone' },
    overlap: { type: 'boolean' },
  }),
};

/** null, or where svc POSTs a kept call's outcome: its form here, where it points when a call is made (never at deploy: no DNS). */
const callbackUrl: SchemaObject = {
  type: ['null', 'string'],
  maxLength: MAX_CALLBACK_URL_LENGTH,
  'x-svc-messages': {
    type: 'must be null (no callback) or the http or https URL of your receiver, like "https://example.com/hooks/svc", got {type}',
    maxLength: `must be at most ${MAX_CALLBACK_URL_LENGTH} characters`,
  },
  'x-svc-check': 'callbackUrl',
};

/** null, or the origins, methods and headers browsers of other origins may use (core/model/cors.ts). */
const cors: SchemaObject = {
  ...closedObject({
    origins: {
      type: 'array',
      minItems: 1,
      maxItems: CORS_LIMITS.origins,
      items: { type: 'string', 'x-svc-check': 'corsOrigin' },
      'x-svc-messages': { minItems: 'must list at least one origin, like "https://app.example.com", or "*"' },
    },
    methods: {
      type: ['null', 'array'],
      minItems: 1,
      items: { type: 'string', 'x-svc-check': 'httpMethod' },
      'x-svc-check': 'distinctMethods',
    },
    headers: {
      type: 'array',
      maxItems: CORS_LIMITS.headers,
      items: {
        type: 'string',
        pattern: HEADER_NAME.source,
        'x-svc-messages': { pattern: 'must be a lower-case header name, like "content-type", got {json}' },
      },
    },
    credentials: { type: 'boolean' },
    max_age: range('integer', { min: 0, max: CORS_LIMITS.maxAgeSeconds }),
  }),
  ...objectOrNull('must be null or an object'),
  'x-svc-check': 'cors',
};

/** null, or `{models, count}`: model names in svc's form (core/model/gpus/gpu-names.ts), tried in order, and GPUs per container. */
const gpu: SchemaObject = {
  ...closedObject({
    models: {
      type: 'array',
      minItems: 1,
      maxItems: gpuRules.maxModels,
      items: {
        type: 'string',
        maxLength: GPU_MODEL_MAX_CHARS,
        pattern: GPU_MODEL_PATTERN.source,
        'x-svc-messages': {
          pattern: 'must be a GPU model in upper case, words joined by "-", like "H100" or "A100-80GB", or "any", got {json}',
        },
      },
      'x-svc-messages': {
        minItems: 'must list at least one GPU model, like "H100", or "any"',
        maxItems: `lists {count} models; a fallback list takes at most ${gpuRules.maxModels}`,
      },
    },
    count: range('integer', { min: 1, max: gpuRules.maxCount }),
  }),
  ...objectOrNull('must be null (no GPU) or an object {"models": [...], "count": n}'),
  'x-svc-check': 'gpu',
};

function optionSchema(rule: OptionRule): SchemaObject {
  switch (rule.type) {
    case 'number':
    case 'integer':
      return range(rule.type, rule);
    case 'boolean':
      return { type: 'boolean' };
    case 'memory':
      return { type: 'string', description: `${memoryRule.text}, from 64Mi to 256Gi`, 'x-svc-check': 'memory' };
    case 'gpu':
      return gpu;
    case 'route':
      return { type: 'string', 'x-svc-check': 'route' };
    case 'openapi': {
      const message = 'must be null (not read) or the app\'s path of its OpenAPI description, like "/openapi.json", got {type}';
      return { type: ['null', 'string'], 'x-svc-messages': { type: message }, 'x-svc-check': 'route' };
    }
    case 'methods':
      return {
        type: 'array',
        minItems: 1,
        items: { type: 'string', 'x-svc-check': 'httpMethod' },
        'x-svc-messages': { minItems: `must list at least one of ${httpMethods.join(', ')}` },
        'x-svc-check': 'distinctMethods',
      };
    case 'domain':
      return { type: ['null', 'string'], 'x-svc-check': 'domain' };
    case 'autoscaler':
      return autoscaler;
    case 'callable': {
      const message = 'must be null or the name of the on_start function (a non-empty string), got';
      return { type: ['null', 'string'], minLength: 1, 'x-svc-messages': { type: `${message} {type}`, minLength: `${message} ""` } };
    }
    case 'schedule':
      return schedule;
    case 'retries':
      return retries;
    case 'callbackUrl':
      return callbackUrl;
    case 'cors':
      return cors;
  }
}

function optionsOf(kind: WorkloadKind): SchemaObject {
  const names = optionsByKind[kind];
  return {
    ...closedObject(
      Object.fromEntries(names.map((name) => [name, optionSchema(optionTable[name].rule)])),
      new Set([...laterOptions, ...(laterOptionsByKind[kind] ?? [])]),
    ),
    'x-svc-key-noun': `option for kind ${kind}`,
  };
}

/** What the argument validator and the client exporters rely on in a `parameters` schema. */
function parametersOf(kind: WorkloadKind): SchemaObject {
  return {
    type: 'object',
    required: ['type'],
    properties: {
      type: { const: 'object', 'x-svc-messages': { const: 'must be "object", got {json}' } },
      properties: {
        type: 'object',
        additionalProperties: { type: 'object', 'x-svc-messages': { type: 'must be a schema object, got {type}' } },
      },
      required: { type: 'array', items: { type: 'string', 'x-svc-messages': { type: 'must be a parameter name, got {type}' } } },
      additionalProperties: { type: ['boolean', 'object'], 'x-svc-messages': { type: 'must be a boolean or a schema object, got {type}' } },
    },
    'x-svc-messages': {
      type: `must be a JSON Schema object for kind ${kind}, got {type}`,
      required: 'missing; parameters are an "object" schema',
    },
    'x-svc-check': 'parameters',
  };
}

const methodName = {
  type: 'string',
  pattern: methodNameRule.pattern.source,
  'x-svc-messages': { pattern: `must be ${methodNameRule.text}, got {json}` },
};

/** A list of at most MAX_CLASS_METHODS `items`, with `least` of them at the least. */
function methodList(items: SchemaObject, least: number, what: string): SchemaObject {
  return {
    type: 'array',
    minItems: least,
    maxItems: MAX_CLASS_METHODS,
    items,
    'x-svc-messages': {
      minItems: `must list at least ${least} ${what}`,
      maxItems: `lists {count} ${what}; a class takes at most ${MAX_CLASS_METHODS}`,
    },
  };
}

/**
 * The `class` of a function that is an `@app.cls` class (its methods' signatures, its set-up and tear-down), and
 * of an endpoint that serves one of its `@svc.endpoint()` methods, which names that method in `serves`.
 */
const classProperties = {
  methods: methodList(
    closedObject({
      name: methodName,
      doc: { type: ['string', 'null'] },
      parameters: parametersOf('function'),
      returns: { type: 'object', 'x-svc-messages': { type: 'must be a JSON Schema object, got {type}' } },
    }),
    0,
    '@svc.method() methods',
  ),
  enter: methodList(closedObject({ name: methodName, snap: { type: 'boolean' } }), 0, '@svc.enter() methods'),
  parameters: {
    type: 'array',
    maxItems: MAX_CLASS_PARAMETERS,
    items: closedObject({ name: methodName, type: { enum: [...classParameterTypes] }, default: true }, new Set(['default'])),
    'x-svc-messages': { maxItems: `lists {count} parameters; a class takes at most ${MAX_CLASS_PARAMETERS}` },
    'x-svc-check': 'classParameters',
  },
  exit: {
    ...methodName,
    type: ['string', 'null'],
    'x-svc-messages': { ...methodName['x-svc-messages'], type: 'must be null or a method name, got {type}' },
  },
};
const classBlock = closedObject(classProperties);
const servedClassBlock = closedObject({ ...classProperties, serves: methodName });

/** The parts of a workload that depend on its kind. */
function kindPart(kind: WorkloadKind): SchemaObject {
  const signature = hasSignature(kind);
  const noSignature = (message: string): SchemaObject => ({ type: 'null', 'x-svc-messages': { type: message } });
  return {
    if: { required: ['kind'], properties: { kind: { const: kind } } },
    then: {
      properties: {
        handler: signature ? nonEmptyString : noSignature(`must be null for kind ${kind} (the app object is found by workload name)`),
        options: { $ref: `#/$defs/options-${kind}` },
        parameters: signature ? parametersOf(kind) : noSignature(`must be null for kind ${kind}, got {type}`),
        returns: signature
          ? { type: 'object', 'x-svc-messages': { type: `must be a JSON Schema object for kind ${kind}, got {type}` } }
          : noSignature(`must be null for kind ${kind}, got {type}`),
        class:
          kind === 'function'
            ? classBlock
            : kind === 'endpoint'
              ? servedClassBlock
              : {
                  not: {},
                  'x-svc-messages': { not: `is only for an @app.cls class and the endpoints of its methods, not for kind ${kind}` },
                },
      },
    },
  };
}

const workloadProperties: Record<(typeof workloadKeys)[number], SchemaObject | boolean> = {
  name: { type: 'string', 'x-svc-check': 'workloadName' },
  kind: { enum: [...workloadKinds] },
  handler: true,
  image: { type: 'string', 'x-svc-check': 'imageRef' },
  doc: { type: ['string', 'null'] },
  options: true,
  parameters: true,
  returns: true,
  class: true,
  secrets: {
    type: 'array',
    maxItems: MAX_WORKLOAD_SECRETS,
    items: { type: 'string' },
    'x-svc-messages': { maxItems: `lists {count} secrets; a workload takes at most ${MAX_WORKLOAD_SECRETS}` },
    'x-svc-check': 'secrets',
  },
  volumes: {
    type: 'array',
    maxItems: MAX_VOLUME_MOUNTS,
    items: closedObject({
      path: { type: 'string', maxLength: MAX_MOUNT_PATH_CHARS, 'x-svc-check': 'mountPath' },
      volume: { type: 'string', 'x-svc-check': 'volumeName' },
      read_only: { type: 'boolean' },
    }),
    'x-svc-messages': { maxItems: `mounts {count} volumes; a workload mounts at most ${MAX_VOLUME_MOUNTS}` },
    'x-svc-check': 'volumeMounts',
  },
};

/** `{name, content}`: a requirements file's base name and its text, which pip reads at build time. */
const requirementsFile = closedObject({
  name: {
    type: 'string',
    pattern: requirementsFileRule.name.source,
    'x-svc-messages': { pattern: `must be ${requirementsFileRule.nameText}, got {json}` },
  },
  content: {
    type: 'string',
    maxLength: requirementsFileRule.maxChars,
    'x-svc-messages': { maxLength: `must be at most ${requirementsFileRule.maxChars} characters (256 KiB)` },
    'x-svc-check': 'requirementsText',
  },
});

const image = closedObject(
  {
    id: { type: 'string', pattern: imageIdRule.pattern.source, 'x-svc-messages': { pattern: `must be ${imageIdRule.text}, got {json}` } },
    python_version: {
      type: 'string',
      pattern: pythonVersionRule.pattern.source,
      'x-svc-messages': { pattern: `must be ${pythonVersionRule.text}, got {json}` },
    },
    python_packages: { type: 'array', items: { ...nonEmptyString, 'x-svc-check': 'requirement' }, 'x-svc-check': 'distinctPackages' },
    requirements_files: {
      type: 'array',
      maxItems: requirementsFileRule.maxFiles,
      items: requirementsFile,
      'x-svc-messages': { maxItems: `lists {count} files; an image takes at most ${requirementsFileRule.maxFiles}` },
    },
    env: {
      type: 'object',
      maxProperties: MAX_IMAGE_ENV,
      additionalProperties: { type: 'string', 'x-svc-messages': { type: 'must be a string, got {type}' } },
      'x-svc-messages': { maxProperties: `must set at most ${MAX_IMAGE_ENV} variables` },
      'x-svc-check': 'imageEnv',
    },
  } satisfies Record<(typeof imageKeys)[number], SchemaObject>,
  optionalImageKeys,
);

const topLevel: Record<(typeof manifestKeys)[number], SchemaObject> = {
  manifest_version: { const: 1 },
  sdk_version: nonEmptyString,
  entry: { type: 'string', pattern: entryRule.pattern.source, 'x-svc-messages': { pattern: `must be ${entryRule.text}, got {json}` } },
  app: closedObject({ name: { type: 'string', 'x-svc-check': 'appName' } }),
  images: { type: 'array', items: image, 'x-svc-check': 'images' },
  workloads: {
    type: 'array',
    items: { ...closedObject(workloadProperties, optionalWorkloadKeys), allOf: workloadKinds.map(kindPart) },
    'x-svc-check': 'workloads',
  },
};

/** docs/manifest.schema.json: what `python -m svc.manifest` prints (docs/manifest.md). */
export const manifestSchema: SchemaObject = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: manifestSchemaId,
  title: 'svc Manifest v1',
  description:
    "What `python -m svc.manifest` prints and `svc deploy` sends (docs/manifest.md). The x-svc-* keywords carry svc's own messages and the checks a schema cannot express.",
  ...closedObject(topLevel),
  $defs: Object.fromEntries(workloadKinds.map((kind) => [`options-${kind}`, optionsOf(kind)])),
};

/** The text of docs/manifest.schema.json. */
export function manifestSchemaText(): string {
  return `${JSON.stringify(manifestSchema, null, 2)}\n`;
}
