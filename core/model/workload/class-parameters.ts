/**
 * The parameters of an `@app.cls` class (`svc.parameter()` in the SDK): each distinct set of values
 * runs in a pool of containers of its own, whose instances have those values as attributes. The
 * manifest declares them (`class.parameters`); a run names the values it wants (`POST
 * /api/v1/runs` `parameters`, and the calls and groups spawned with them); the containers get
 * them as the JSON object `SVC_CLASS_PARAMETERS`.
 */
import { SvcError } from '../errors.js';
import type { ClassSpec } from './types.js';

export const classParameterTypes = ['str', 'int', 'bool', 'bytes'] as const;
export type ClassParameterType = (typeof classParameterTypes)[number];
/** A value as JSON carries it: bytes as `{"base64": "..."}`. */
export type ClassParameterValue = string | number | boolean | { readonly base64: string };
export type ClassParameterValues = Readonly<Record<string, ClassParameterValue>>;

/** At most this many parameters per class. */
export const MAX_CLASS_PARAMETERS = 16;
/** A str parameter's longest value, and a bytes parameter's longest base64 text (3 KiB of bytes). */
export const MAX_PARAMETER_CHARS = 4096;
/** The variable a container's runtime reads them from. */
export const CLASS_PARAMETERS_ENV = 'SVC_CLASS_PARAMETERS';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What is wrong with `value` as a value of `type`, or null. */
export function parameterValueProblem(type: ClassParameterType, value: unknown): string | null {
  const got = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  switch (type) {
    case 'str':
      if (typeof value !== 'string') return `must be a string, got ${got}`;
      return value.length > MAX_PARAMETER_CHARS ? `must be at most ${MAX_PARAMETER_CHARS} characters` : null;
    case 'int':
      return Number.isSafeInteger(value) ? null : `must be an integer (within ±2^53), got ${typeof value === 'number' ? value : got}`;
    case 'bool':
      return typeof value === 'boolean' ? null : `must be true or false, got ${got}`;
    case 'bytes': {
      const text =
        value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as { base64?: unknown }).base64 : undefined;
      if (typeof text !== 'string' || Object.keys(value as object).length !== 1)
        return `must be {"base64": "<the bytes, base64>"}, got ${got}`;
      if (text.length > MAX_PARAMETER_CHARS) return `must be at most ${MAX_PARAMETER_CHARS} characters of base64`;
      return BASE64.test(text) && text.length % 4 === 0 ? null : 'must hold valid base64 in "base64"';
    }
  }
}

/**
 * The values a run of `workload`'s class gets: `given` checked against the class's parameters, the
 * defaults filled in, in the order the class declares them. `bad_request` naming the parameter for
 * one that is unknown, missing, or of the wrong type; for a function that is no class, any `given`.
 */
export function bindClassParameters(workload: { readonly name: string; readonly class?: ClassSpec }, given: unknown): ClassParameterValues {
  const declared = workload.class?.parameters ?? [];
  if (given === undefined || given === null) given = {};
  if (typeof given !== 'object' || Array.isArray(given))
    throw refused(`the field "parameters" must be an object, got ${Array.isArray(given) ? 'array' : typeof given}`);
  const values = given as Record<string, unknown>;
  const unknown = Object.keys(values).filter((name) => !declared.some((p) => p.name === name));
  if (unknown.length > 0) {
    const takes = declared.length === 0 ? 'takes no parameters' : `takes ${declared.map((p) => p.name).join(', ')}`;
    throw refused(`${workload.name} has no parameter ${unknown.map((name) => JSON.stringify(name)).join(', ')}: it ${takes}`);
  }
  const bound: Record<string, ClassParameterValue> = {};
  for (const parameter of declared) {
    const value = Object.hasOwn(values, parameter.name) ? values[parameter.name] : parameter.default;
    if (value === undefined)
      throw refused(
        `${workload.name} needs its parameter "${parameter.name}" (${parameter.type === 'int' ? 'an' : 'a'} ${parameter.type})`,
      );
    const problem = parameterValueProblem(parameter.type, value);
    if (problem !== null) throw refused(`${workload.name}'s parameter "${parameter.name}" ${problem}`);
    bound[parameter.name] = value as ClassParameterValue;
  }
  return bound;
}

function refused(message: string): SvcError {
  return new SvcError('bad_request', `${message}.`, {
    hint: 'Give the values its svc.parameter() attributes declare: str, int, bool, or bytes as {"base64": ...} (docs/sdk.md, "Classes").',
  });
}
