/**
 * The routes' declared schemas at work. Each JSON body is checked against
 * its route's declared request schema (compiled at start-up) before the
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
 * Refuses a body its route's declared JSON schema refuses (`bad_request`).
 * OAuth routes keep their own checks: RFC 6749 asks them to ignore unknown
 * parameters and to answer in OAuth's words.
 */
export function bodyCheck(route: ApiRoute): (body: unknown) => void {
  const schema = route.openapi.requestBody?.content['application/json']?.schema;
  if (route.body !== 'json' || schema === undefined) return () => {};
  const validate = compileDeclared(schema);
  return (body) => {
    if (validate(body)) return;
    const error = schemaError(validate, { leftToReader: route.openapi.leftToHandler ?? {} });
    if (error !== null) throw error;
  };
}
