/**
 * The rules of Manifest v1 that its JSON Schema (core/model/workload/manifest/schema.ts)
 * cannot express, each named there by `x-svc-check`: svc's name rule, routes,
 * hostnames, memory sizes, cron, duplicates, and ids resolved against each
 * other. A check runs wherever its schema applies, whatever the value: it
 * looks only at values of the type it expects, since the schema reports the others.
 */
import { MAX_CALLBACK_URL_LENGTH, callbackUrlLength, callbackUrlProblem } from '../../callback-url.js';
import type { Check, Report } from '../../schema/ajv.js';
import { ENV_NAME_PATTERN, ENV_NAME_RULE, MAX_ENV_VALUE_BYTES, isReservedEnvName, reservedEnvText } from '../../env-names.js';
import { type ClassParameterType, classParameterTypes, parameterValueProblem } from '../class-parameters.js';
import { formatMemoryMiB, parseMemoryMiB } from '../memory.js';
import {
  INLINE_SECRET_REF,
  autoscalerRules,
  httpMethods,
  imageIdRule,
  isDomainName,
  memoryRule,
  nameProblem,
  nameRule,
  pythonVersionRule,
  routeProblems,
} from '../rules.js';
import { cronProblem, timezoneProblem } from '../schedule.js';
import { mountPathProblem, mountPathsOverlap } from '../../volume-mounts.js';
import { corsOriginProblem } from '../../cors.js';
import { ANY_GPU, GPU_MODEL_PATTERN, canonicalModel } from '../../gpus/gpu-names.js';
import { type ImageIdFields, idFieldsText, imageIdFor } from './image-id.js';
import { includeLine } from './requirements-text.js';

type Plain = Record<string, unknown>;

export function isPlainObject(value: unknown): value is Plain {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `"say_hello" has the character "_" at position 4; …; try "say-hello" (a name is a lowercase DNS label: …)`. */
function nameIssue(name: string, problem: string): string {
  return `${JSON.stringify(name)} ${problem} (a name is ${nameRule})`;
}

/** Reports each repeated key of `items` at its index, naming the first index it repeats (null keys are skipped). */
function reportDuplicates<T>(
  items: readonly T[],
  keyOf: (item: T) => string | null,
  report: (index: number, first: number, key: string) => void,
): void {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const key = keyOf(item);
    if (key === null) return;
    const first = seen.get(key);
    if (first !== undefined) report(index, first, key);
    else seen.set(key, index);
  });
}

const stringOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A string `id` of each object entry of the manifest's `images` (even a malformed one, reported once, there); null when `images` is not a list. */
function declaredImageIds(root: unknown): Set<string> | null {
  const images = isPlainObject(root) ? root.images : undefined;
  if (!Array.isArray(images)) return null;
  return new Set(images.flatMap((image) => (isPlainObject(image) && typeof image.id === 'string' ? [image.id] : [])));
}

const name =
  (kind: 'app' | 'workload' | 'volume'): Check =>
  (value, report) => {
    if (typeof value !== 'string') return;
    const problem = nameProblem(value, kind);
    if (problem !== null) report(nameIssue(value, problem));
  };

/** The fields an image's id is computed from, when they have the types the schema asks for; null otherwise (the schema reports them). */
function idFields(image: Plain): ImageIdFields | null {
  const { python_version: version, python_packages: packages, requirements_files: files, env } = image;
  if (typeof version !== 'string' || !pythonVersionRule.pattern.test(version)) return null;
  if (!Array.isArray(packages) || !packages.every((item) => typeof item === 'string' && item.trim() !== '')) return null;
  const validFile = (file: unknown): boolean => isPlainObject(file) && typeof file.name === 'string' && typeof file.content === 'string';
  if (files !== undefined && !(Array.isArray(files) && files.every(validFile))) return null;
  if (env !== undefined && !(isPlainObject(env) && Object.values(env).every((value) => typeof value === 'string'))) return null;
  return {
    python_version: version,
    python_packages: packages as string[],
    requirements_files: files as ImageIdFields['requirements_files'],
    env: env as ImageIdFields['env'],
  };
}

/** Image ids: the content address (when the image's fields are valid), duplicates, order; and images no workload uses. */
const images: Check = (value, report, root) => {
  if (!Array.isArray(value)) return;
  const ids = value.map((image) => (isPlainObject(image) ? stringOf(image.id) : null));
  let previousId: string | null = null;
  ids.forEach((id, index) => {
    if (id === null) return;
    const fields = idFields(value[index] as Plain);
    if (imageIdRule.pattern.test(id) && fields !== null) {
      const expected = imageIdFor(fields);
      if (expected !== id) report(`does not match the image's ${idFieldsText(fields)}; expected ${expected}`, index, 'id');
    }
    if (ids.indexOf(id) !== index) report(`duplicate image id (also images[${ids.indexOf(id)}])`, index, 'id');
    if (previousId !== null && id < previousId) report('out of order: images must be sorted by id', index, 'id');
    previousId = id;
  });
  const workloads = isPlainObject(root) ? root.workloads : undefined;
  if (!Array.isArray(workloads)) return;
  const used = new Set(workloads.map((workload) => (isPlainObject(workload) ? workload.image : undefined)));
  ids.forEach((id, index) => {
    if (id !== null && ids.indexOf(id) === index && !used.has(id))
      report('not used by any workload (images lists only the images workloads use)', index);
  });
};

const imageRef: Check = (value, report, root) => {
  const ids = declaredImageIds(root);
  if (typeof value === 'string' && ids !== null && !ids.has(value))
    report(`no entry of images has this id; known: ${[...ids].join(', ') || '(none)'}`);
};

/** The image builder hands these to pip: an option ("-e", "--index-url") or a second line would be obeyed. */
const requirement: Check = (value, report) => {
  if (typeof value !== 'string' || value.trim() === '') return;
  if (/[\r\n]/.test(value)) report('must be one line: one requirement per list item');
  else if (value.trimStart().startsWith('-')) report('must be a requirement, not a pip option');
};

/**
 * A requirements file's text goes to pip as it is, but a line naming another file (`-r`, `-c`)
 * would make the build read a file of the build machine: the SDK refuses it too (_image_files.py).
 */
const requirementsText: Check = (value, report) => {
  if (typeof value !== 'string') return;
  const line = includeLine(value);
  if (line !== null)
    report(
      `line ${line.number} (${JSON.stringify(line.text)}) names another file, which the build does not have; send that file's text as its own entry`,
    );
};

/** An image's variables: portable names, none of svc's own, values an environment can hold. */
const imageEnv: Check = (value, report) => {
  if (!isPlainObject(value)) return;
  for (const [name, variable] of Object.entries(value)) {
    if (!ENV_NAME_PATTERN.test(name)) report(`${JSON.stringify(name)} is not ${ENV_NAME_RULE}`, name);
    else if (isReservedEnvName(name))
      report(`is a variable svc sets in every container itself (${reservedEnvText}); choose another name`, name);
    if (typeof variable !== 'string') continue;
    if (variable.includes('\0')) report('holds a NUL character, which no environment variable can', name);
    else if (Buffer.byteLength(variable, 'utf8') > MAX_ENV_VALUE_BYTES) report(`is over ${MAX_ENV_VALUE_BYTES} bytes`, name);
  }
};

const distinctPackages: Check = (value, report) => {
  if (!Array.isArray(value)) return;
  const keyOf = (item: unknown): string | null => (typeof item === 'string' && item.trim() !== '' ? item : null);
  reportDuplicates(value, keyOf, (index, first) => report(`duplicate package (also python_packages[${first}])`, index));
};

const workloads: Check = (value, report) => {
  if (!Array.isArray(value)) return;
  const nameOf = (workload: unknown): string | null => (isPlainObject(workload) ? stringOf(workload.name) : null);
  reportDuplicates(value, nameOf, (index, first, key) =>
    report(`duplicate workload name ${JSON.stringify(key)} (also workloads[${first}])`, index, 'name'),
  );
};

const secrets: Check = (value, report) => {
  if (!Array.isArray(value)) return;
  value.forEach((secret, index) => {
    if (typeof secret !== 'string') return;
    const problem = INLINE_SECRET_REF.test(secret) ? null : nameProblem(secret, 'secret');
    if (problem !== null) report(`the secret name ${JSON.stringify(secret)} ${problem}`, index);
  });
  reportDuplicates(value, stringOf, (index, first, key) =>
    report(`duplicate secret ${JSON.stringify(key)} (also secrets[${first}])`, index),
  );
};

const mountPath: Check = (value, report) => {
  if (typeof value !== 'string') return;
  const problem = mountPathProblem(value);
  if (problem !== null) report(`the mount path ${JSON.stringify(value)} ${problem}`);
};

/** Two mounts of one workload: neither at the same path nor one inside the other; one volume may be mounted twice. */
const volumeMounts: Check = (value, report) => {
  if (!Array.isArray(value)) return;
  const paths = value.map((mount) => (isPlainObject(mount) ? stringOf(mount.path) : null));
  paths.forEach((path, index) => {
    if (path === null || mountPathProblem(path) !== null) return;
    const first = paths.findIndex((other, at) => at < index && other !== null && mountPathsOverlap(path, other));
    if (first < 0) return;
    const how = paths[first] === path ? 'is also' : 'overlaps';
    report(
      `the mount path ${JSON.stringify(path)} ${how} volumes[${first}].path ${JSON.stringify(paths[first])}: give each volume its own folder`,
      index,
      'path',
    );
  });
};

const corsOrigin: Check = (value, report) => {
  if (typeof value !== 'string') return;
  const problem = corsOriginProblem(value);
  if (problem !== null) report(`the origin ${JSON.stringify(value)} ${problem}`);
};

/** `*` lets any page call; with credentials it would hand any page the user's cookies: browsers refuse it, so does svc. */
const cors: Check = (value, report) => {
  if (!isPlainObject(value) || !Array.isArray(value.origins)) return;
  if (value.credentials === true && value.origins.includes('*')) {
    report('"*" with credentials is refused (browsers do too): list the origins that may send credentials', 'origins');
  }
};

/** A model in svc's one form (what the SDK writes), distinct, and `any` only last: a model after it would never be tried. */
const gpu: Check = (value, report) => {
  if (!isPlainObject(value) || !Array.isArray(value.models)) return;
  const models = value.models;
  models.forEach((model, index) => {
    if (typeof model !== 'string' || !GPU_MODEL_PATTERN.test(model)) return;
    const canonical = canonicalModel(model);
    if (canonical === null)
      report(`${JSON.stringify(model)} names no GPU model (a size alone?): write one like "A100-80GB"`, 'models', index);
    else if (canonical !== model) report(`${JSON.stringify(model)} is written ${JSON.stringify(canonical)} in a manifest`, 'models', index);
    else if (model === ANY_GPU && index < models.length - 1)
      report('"any" must come last: the models after it would never be tried', 'models', index);
  });
  reportDuplicates(models, stringOf, (index, first, key) =>
    report(`lists ${JSON.stringify(key)} twice (also models[${first}])`, 'models', index),
  );
};

const memory: Check = (value, report) => {
  if (typeof value !== 'string') return;
  const mib = parseMemoryMiB(value);
  if (mib === null) report(`must be ${memoryRule.text}, like "512Mi" or "2Gi", got ${JSON.stringify(value)}`);
  else if (mib < memoryRule.minMiB || mib > memoryRule.maxMiB) {
    report(`must be from ${formatMemoryMiB(memoryRule.minMiB)} to ${formatMemoryMiB(memoryRule.maxMiB)}, got ${JSON.stringify(value)}`);
  }
};

const route: Check = (value, report) => {
  if (typeof value !== 'string') return;
  const problems = routeProblems(value);
  if (problems.length > 0) report(`${problems.join('; ')}, got ${JSON.stringify(value)}`);
};

const domain: Check = (value, report) => {
  if (typeof value === 'string' && !isDomainName(value)) {
    report(`must be a lower-case DNS hostname with at least one dot, like "api.example.com", got ${JSON.stringify(value)}`);
  }
};

const isHttpMethod = (method: string): boolean => (httpMethods as readonly string[]).includes(method);

const httpMethod: Check = (value, report) => {
  if (typeof value !== 'string' || isHttpMethod(value)) return;
  if (isHttpMethod(value.toUpperCase())) report(`must be upper-case: ${JSON.stringify(value.toUpperCase())}`);
  else report(`unknown HTTP method ${JSON.stringify(value)}; allowed: ${httpMethods.join(', ')}`);
};

const distinctMethods: Check = (value, report) => {
  if (!Array.isArray(value)) return;
  const keyOf = (method: unknown): string | null => (typeof method === 'string' && isHttpMethod(method) ? method : null);
  reportDuplicates(value, keyOf, (index, first, method) => report(`duplicate method ${method} (also methods[${first}])`, index));
};

/** `min_containers` is bounded by `max_containers`, when both are valid. */
const autoscaler: Check = (value, report) => {
  if (!isPlainObject(value)) return;
  const { min_containers: min, max_containers: max } = value;
  const valid = (n: unknown, rule: { min: number; max: number }): n is number =>
    Number.isInteger(n) && (n as number) >= rule.min && (n as number) <= rule.max;
  if (valid(min, autoscalerRules.min_containers) && valid(max, autoscalerRules.max_containers) && min > max)
    report(`must not exceed max_containers (${max}), got ${min}`, 'min_containers');
};

const cron: Check = (value, report) => {
  const problem = typeof value === 'string' ? cronProblem(value) : null;
  if (problem !== null) report(problem);
};

const timezone: Check = (value, report) => {
  const problem = typeof value === 'string' ? timezoneProblem(value) : null;
  if (problem !== null) report(problem);
};

/** A callback URL's form (its length is the schema's `maxLength`); where it points is checked when a call is made. */
const callbackUrl: Check = (value, report) => {
  const problem = typeof value === 'string' && callbackUrlLength(value) <= MAX_CALLBACK_URL_LENGTH ? callbackUrlProblem(value) : null;
  if (problem !== null) report(`is not a callback URL svc can use: ${problem}`);
};

/** Parameter name the runtime passes itself; the SDK leaves it out of the schema. */
const reservedParameter = 'context';

/** `required` names distinct entries of `properties`, which must not have the runtime's own parameter. */
const parameters: Check = (value, report: Report) => {
  if (!isPlainObject(value)) return;
  const properties = isPlainObject(value.properties) ? value.properties : {};
  if (Object.hasOwn(properties, reservedParameter))
    report('is reserved for the runtime and must not appear in the schema', 'properties', reservedParameter);
  const required: unknown = value.required;
  if (!Array.isArray(required)) return;
  required.forEach((name, index) => {
    if (typeof name === 'string' && !Object.hasOwn(properties, name) && required.indexOf(name) === index) {
      report(`names no entry of properties: ${JSON.stringify(name)}`, 'required', index);
    }
  });
  reportDuplicates(required, stringOf, (index, _first, key) => report(`duplicate parameter ${JSON.stringify(key)}`, 'required', index));
};

/** A class's parameters: distinct names, and each default a value of its parameter's type. */
const classParameters: Check = (value, report) => {
  if (!Array.isArray(value)) return;
  reportDuplicates(
    value,
    (parameter) => (isPlainObject(parameter) ? stringOf(parameter.name) : null),
    (index, first, key) => report(`duplicate parameter ${JSON.stringify(key)} (also parameters[${first}])`, index, 'name'),
  );
  value.forEach((parameter, index) => {
    if (!isPlainObject(parameter) || !Object.hasOwn(parameter, 'default')) return;
    const type = parameter.type;
    if (typeof type !== 'string' || !(classParameterTypes as readonly string[]).includes(type)) return;
    const problem = parameterValueProblem(type as ClassParameterType, parameter.default);
    if (problem !== null) report(problem, index, 'default');
  });
};

/** Every check the manifest schema names. */
export const manifestChecks: Readonly<Record<string, Check>> = {
  appName: name('app'),
  workloadName: name('workload'),
  images,
  imageRef,
  requirement,
  requirementsText,
  imageEnv,
  distinctPackages,
  workloads,
  secrets,
  mountPath,
  corsOrigin,
  cors,
  volumeName: name('volume'),
  volumeMounts,
  memory,
  gpu,
  route,
  domain,
  httpMethod,
  distinctMethods,
  autoscaler,
  cron,
  timezone,
  callbackUrl,
  parameters,
  classParameters,
};
