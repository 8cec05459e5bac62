/**
 * A request body's schema errors in the words the API has always written:
 * the first fault in svc's order as `bad_request` (`unknown field "x"; this
 * route takes "a", "b".`, `the field "x" is required.`, `… must be a string,
 * not number.`), naming the field in `details.field`.
 */
import { SvcError } from '../errors.js';
import { type ErrorObject, knownSchema, pointerKeys, type Schema, type ValidateFunction } from './ajv.js';

export interface ErrorWording {
  /** Who takes the fields, for the unknown-field message: `this route` by default. */
  readonly taker?: string;
  /** Errors of these keywords of these fields are left to whoever reads the field, which refuses it in words of its own. */
  readonly leftToReader?: Readonly<Record<string, readonly string[]>>;
}

/**
 * The first of `validate`'s errors in svc's order (an unknown field first,
 * then the fields in the order the schema lists them), as a `bad_request`;
 * null when every error is left to the reader.
 */
export function schemaError(validate: ValidateFunction, wording: ErrorWording = {}): SvcError | null {
  const root = resolved(validate.schema as Schema);
  const order = Object.keys((root.properties ?? {}) as object);
  const rank = (error: ErrorObject) => {
    if (error.keyword === 'additionalProperties') return -1;
    const at = order.indexOf(fieldPath(error)[0] ?? '');
    return at < 0 ? order.length : at;
  };
  const errors = (validate.errors ?? [])
    .map((error) => asMissing(error, root))
    .filter((error) => !wording.leftToReader?.[fieldPath(error)[0] ?? '']?.includes(error.keyword));
  const first = errors.sort((a, b) => rank(a) - rank(b))[0];
  return first === undefined ? null : svcError(first, wording.taker ?? 'this route');
}

/** A null reads as missing: null in a field that must be there is a `required` error. */
function asMissing(error: ErrorObject, root: Schema): ErrorObject {
  const path = fieldPath(error);
  if (error.keyword !== 'type' || error.data !== null || path.length !== 1 || !((root.required ?? []) as string[]).includes(path[0]!))
    return error;
  return { ...error, keyword: 'required', instancePath: '', params: { missingProperty: path[0] } };
}

function svcError(error: ErrorObject, taker: string): SvcError {
  const field = fieldPath(error).join('.');
  const named = `the field ${JSON.stringify(field)}`;
  const fail = (message: string) => new SvcError('bad_request', message, { details: { field } });
  const schema = (error.parentSchema ?? {}) as Schema;
  const value = error.data;
  if (error.keyword === 'additionalProperties') {
    const known = Object.keys((schema.properties ?? {}) as object);
    const takes = known.length === 0 ? 'takes no fields' : `takes ${known.map((k) => JSON.stringify(k)).join(', ')}`;
    return fail(`unknown field ${JSON.stringify(field)}; ${taker} ${takes}.`);
  }
  if (error.keyword === 'required') return fail(`${named} is required.`);
  const types = [schema.type].flat().filter((type) => type !== 'null');
  if (types.includes('integer') && typeof schema.minimum === 'number' && typeof schema.maximum === 'number') {
    return fail(`${named} must be a whole number from ${schema.minimum} to ${schema.maximum}, not ${JSON.stringify(value)}.`);
  }
  if (error.keyword === 'type' && types.length === 1) {
    const kind = Array.isArray(value) ? 'an array' : typeof value;
    if (types[0] === 'string') return fail(`${named} must be a string, not ${kind}.`);
    if (types[0] === 'boolean') return fail(`${named} must be true or false, not ${JSON.stringify(value)}.`);
  }
  return fail(`${named} ${error.message ?? 'is not valid'}.`);
}

/** The path of the field an error is about: its place in the data, and the property it misses or does not know. */
function fieldPath(error: ErrorObject): string[] {
  const path = pointerKeys(error.instancePath);
  const named = error.params.missingProperty ?? error.params.additionalProperty;
  return typeof named === 'string' ? [...path, named] : path;
}

/** A schema that only points at another (`{"$ref": …}`), followed. */
function resolved(schema: Schema): Schema {
  const ref = schema.$ref;
  return typeof ref === 'string' ? resolved((knownSchema(ref)?.schema ?? {}) as Schema) : schema;
}
