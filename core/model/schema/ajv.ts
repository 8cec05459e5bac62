/**
 * svc's one Ajv (JSON Schema 2020-12, as OpenAPI 3.1 takes it): the API's
 * declared request and answer schemas, the Manifest v1 schema and the config
 * file's schema all compile here. Its errors are put in svc's words by
 * `issues.ts` (a document's every issue, with its path: manifests, config) and
 * `request-error.ts` (a request body's first fault, as `bad_request`).
 *
 * Schemas may carry three svc keywords, which other JSON Schema tools ignore:
 * - `x-svc-messages`: svc's message for a keyword of that schema, overriding the
 *   default one; `{type}`, `{json}` and `{count}` are filled in (issues.ts).
 * - `x-svc-key-noun`: what `required` and `additionalProperties` call a key
 *   ("option for kind endpoint" gives "unknown option for kind endpoint; allowed: …").
 * - `x-svc-check`: the name of a check (`defineChecks`) for what a schema cannot
 *   say: rules with their own messages, and values resolved against each other.
 */
import { Ajv2020, type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

export type { ErrorObject, SchemaObject, ValidateFunction };
export type Schema = Readonly<Record<string, unknown>>;

/** Reports a problem with the checked value, or with a child of it (`segments` below it). */
export type Report = (message: string, ...segments: (string | number)[]) => void;
/** A check named by `x-svc-check`: `root` is the whole document being validated. */
export type Check = (value: unknown, report: Report, root: unknown) => void;

const checks = new Map<string, Check>();

/** Makes checks available to `x-svc-check`; a name is defined once. */
export function defineChecks(named: Readonly<Record<string, Check>>): void {
  for (const [name, check] of Object.entries(named)) {
    if (checks.has(name)) throw new Error(`x-svc-check ${name} is defined twice`);
    checks.set(name, check);
  }
}

// allErrors: svc orders the errors itself (issues.ts, request-error.ts), not Ajv; verbose: errors carry their schema and data.
// validateSchema off: checking each schema against the 2020-12 meta-schema first compiles that (a tenth
// of a second of every process that compiles a schema, svc server's start and each `svc deploy`), and
// svc compiles only its own schemas, which strict mode still checks (unknown keywords, a keyword's
// value of the wrong type) and the tests check against the meta-schema (metaSchemaErrors).
const ajv = new Ajv2020({
  allErrors: true,
  verbose: true,
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
  validateSchema: false,
});
formats.default(ajv);
ajv.addKeyword({ keyword: 'x-svc-messages', schemaType: 'object' });
ajv.addKeyword({ keyword: 'x-svc-key-noun', schemaType: 'string' });
ajv.addKeyword({
  keyword: 'x-svc-check',
  schemaType: 'string',
  errors: true,
  validate: function runCheck(name: string, value: unknown, _schema?: unknown, context?: { instancePath: string; rootData: unknown }) {
    const check = checks.get(name);
    if (check === undefined) throw new Error(`x-svc-check ${name} is not defined`);
    const errors: Partial<ErrorObject>[] = [];
    check(
      value,
      (message, ...segments) => {
        const below = segments.map((segment) => `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
        errors.push({ keyword: 'x-svc-check', instancePath: `${context?.instancePath ?? ''}${below}`, params: {}, message });
      },
      context?.rootData,
    );
    (runCheck as { errors?: Partial<ErrorObject>[] }).errors = errors;
    return errors.length === 0;
  },
});

/** What the JSON Schema 2020-12 meta-schema finds wrong with `schema` (Ajv's words), or null: for the tests. */
export function metaSchemaErrors(schema: Schema): string | null {
  return ajv.validateSchema(schema) === true ? null : ajv.errorsText(ajv.errors);
}

/** Compiles a schema once; validate with it, then word its `errors` with issues.ts or request-error.ts. */
export function compile<T = unknown>(schema: SchemaObject): ValidateFunction<T> {
  return ajv.compile<T>(schema);
}

/** Registers schemas that others point at by these `$ref`s (`#/components/schemas/Token`); a ref already known is kept. */
export function defineRefs(byRef: Readonly<Record<string, Schema>>): void {
  for (const [ref, schema] of Object.entries(byRef)) if (ajv.getSchema(ref) === undefined) ajv.addSchema(schema, ref);
}

/** The validator of a schema by its `$id` or `$ref`, or of a part of one by a JSON pointer (`#/$defs/x`); undefined when unknown. */
export function knownSchema(ref: string): ValidateFunction | undefined {
  return ajv.getSchema(ref);
}

/** The validator of a part of a compiled schema, by its `$id` and a JSON pointer (`#/$defs/x`). */
export function compiledPart(ref: string): ValidateFunction {
  const validate = knownSchema(ref);
  if (validate === undefined) throw new Error(`no schema ${ref}`);
  return validate;
}

/** The keys of an error's `instancePath`, unescaped (`/a~1b/0` → `a/b`, `0`). */
export function pointerKeys(instancePath: string): string[] {
  return instancePath === ''
    ? []
    : instancePath
        .slice(1)
        .split('/')
        .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
}
