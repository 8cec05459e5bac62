/**
 * The routes' declared schemas at work. Each JSON body is checked against
 * its route's declared request schema (compiled when the route is first asked for) before the
 * handler runs; errors of the fields a handler checks in words of its own
 * (`leftToHandler`) are left to it. The tests check each answer against the
 * declared answer schema of its status with the same compiled schemas.
 */
import { compile, defineRefs, type Schema, type ValidateFunction } from '../../model/schema/ajv.js';
import { schemaError } from '../../model/schema/request-error.js';
import { schemas } from './openapi/schemas.js';
import type { ApiRoute } from './types.js';

defineRefs(Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [`#/components/schemas/${name}`, schema])));

/** Compiles a schema of the declarations; its `$ref`s point into docs/openapi.json's `components.schemas`. */
export function compileDeclared(schema: Schema): ValidateFunction {
  return compile(schema);
}

/**
 * A schema of the declarations, compiled when it is first used: a server compiles only what its
 * requests need (compiling every route's at start-up was a tenth of `svc server`'s start).
 * test/core/http/api/openapi.test.ts compiles them all, so a schema Ajv refuses fails a test.
 */
export function declaredValidator(schema: Schema): () => ValidateFunction {
  let validate: ValidateFunction | undefined;
  return () => (validate ??= compileDeclared(schema));
}

/**
 * Refuses a body its route's declared JSON schema refuses (`bad_request`).
 * OAuth routes keep their own checks: RFC 6749 asks them to ignore unknown
 * parameters and to answer in OAuth's words.
 */
export function bodyCheck(route: ApiRoute): (body: unknown) => void {
  const schema = route.openapi.requestBody?.content['application/json']?.schema;
  if (route.body !== 'json' || schema === undefined) return () => {};
  const validator = declaredValidator(schema);
  return (body) => {
    const validate = validator();
    if (validate(body)) return;
    const error = schemaError(validate, { leftToReader: route.openapi.leftToHandler ?? {} });
    if (error !== null) throw error;
  };
}
