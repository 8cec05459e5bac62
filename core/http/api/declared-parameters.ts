/**
 * The routes' declared path and query parameters at work. Each is checked
 * against its declared schema (compiled once, at start-up, by the one Ajv)
 * before the handler runs, and a value the schema refuses is answered as the
 * parameter declares (`Parameter.refusal`), in the route's own words:
 * `name_invalid` for an app name, `bad_request` for a run id, `not_found` for
 * an example. Path parameters come first, in the order of the path; then the
 * query's: a missing one before a malformed one (an empty value is missing).
 * A route whose path names a parameter it does not declare, or that declares
 * one its path lacks, or one that can be refused without a refusal, is a
 * mistake in svc, refused at start-up (`declarationProblems`).
 */
import { isDeepStrictEqual } from 'node:util';
import type { ValidateFunction } from '../../model/schema/ajv.js';
import { declaredValidator } from './declared-schemas.js';
import type { Parameter, RefusedRequest } from './openapi/types.js';
import type { ApiRoute } from './types.js';

/** What a request gives the check: its decoded path parameters, its query, and the caller's workspace (null on a public route). */
export interface ParameterValues extends RefusedRequest {
  readonly query: URLSearchParams;
}

export type ParameterCheck = (values: ParameterValues) => Promise<void>;

/** The schema that takes any string: a parameter declared with it needs no refusal. */
const ANY_STRING = { type: 'string' };

/** The `:name`s of a route's path, in order. */
export function pathParameterNames(route: Pick<ApiRoute, 'path'>): string[] {
  return [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
}

/** The path and query parameters a route declares (`pathParameters`, then `parameters`). */
export function declaredParameters(route: Pick<ApiRoute, 'openapi'>): Parameter[] {
  const { pathParameters = [], parameters = [] } = route.openapi;
  return [...pathParameters, ...parameters].filter((parameter) => parameter.in === 'path' || parameter.in === 'query');
}

/** What is wrong with a route's parameter declarations, one line each; [] when nothing is. */
export function declarationProblems(route: Pick<ApiRoute, 'method' | 'path' | 'openapi'>): string[] {
  const where = `${route.method} ${route.path}`;
  const declared = declaredParameters(route);
  const inPath = declared.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name);
  const named = pathParameterNames(route);
  const problems = [
    ...named.filter((name) => !inPath.includes(name)).map((name) => `${where}: the path parameter ${name} is not declared`),
    ...inPath.filter((name) => !named.includes(name)).map((name) => `${where}: declares the path parameter ${name}, which its path lacks`),
    ...inPath.filter((name, i) => inPath.indexOf(name) !== i).map((name) => `${where}: declares the path parameter ${name} twice`),
  ];
  for (const parameter of declared) {
    const refusable = !isDeepStrictEqual(parameter.schema, ANY_STRING) || (parameter.in === 'query' && parameter.required);
    if (refusable && parameter.refusal === undefined)
      problems.push(`${where}: the ${parameter.in} parameter ${parameter.name} can be refused, but declares no refusal`);
  }
  return problems;
}

/** The check of a route's declared parameters (compiled when first used); throws now when its declarations are wrong. */
export function parameterCheck(route: ApiRoute): ParameterCheck {
  const problems = declarationProblems(route);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const compiled = (parameter: Parameter) => ({ parameter, validate: declaredValidator(parameter.schema) });
  const declared = declaredParameters(route);
  const path = pathParameterNames(route).map((name) => compiled(declared.find((p) => p.in === 'path' && p.name === name)!));
  const query = declared.filter((parameter) => parameter.in === 'query').map(compiled);
  if (path.length === 0 && query.length === 0) return async () => {};
  return async ({ params, query: search, workspace }) => {
    const request = { params, workspace };
    for (const { parameter, validate } of path) await check(parameter, validate, params[parameter.name], request);
    const given = query.map((entry) => ({ ...entry, value: search.get(entry.parameter.name) || undefined }));
    for (const { parameter, value } of given) if (value === undefined && parameter.required) throw await refuse(parameter, value, request);
    for (const { parameter, validate, value } of given) if (value !== undefined) await check(parameter, validate, value, request);
  };
}

async function check(
  parameter: Parameter,
  validate: () => ValidateFunction,
  value: string | undefined,
  request: RefusedRequest,
): Promise<void> {
  if (!validate()(value)) throw await refuse(parameter, value, request);
}

function refuse(parameter: Parameter, value: string | undefined, request: RefusedRequest) {
  // declarationProblems made sure that a parameter that can be refused has a refusal.
  return parameter.refusal!.refuse(value, request);
}
