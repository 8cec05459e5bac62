/**
 * The OpenAPI 3.1 facts a route declares (`ApiRoute.openapi`), as plain data:
 * its request and answer schemas, declared once. The router checks JSON
 * bodies against them, docs/openapi.json is made of them, and the tests check
 * every answer against them (core/http/api/declared-schemas.ts).
 * What follows from the route itself is not repeated here: its path, its
 * method and, for a public route, `security: []` are added by the generator
 * (core/http/api/openapi.ts).
 */

import type { ErrorCode, SvcError } from '../../../model/errors.js';

/** A JSON Schema (OpenAPI 3.1 takes JSON Schema 2020-12 as it is). */
export type Schema = Readonly<Record<string, unknown>>;

/** Bodies by media type (`application/json`, `text/event-stream`, …). */
export type Content = Readonly<Record<string, { readonly schema: Schema }>>;

export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required: boolean;
  readonly description?: string;
  readonly schema: Schema;
  /**
   * How a path or query value its schema refuses (or a required query
   * parameter that is missing) is answered, in the route's own words: the
   * router checks the value before the handler runs (declared-parameters.ts).
   * Every parameter whose schema takes less than any string declares one.
   * docs/openapi.json says it as `x-svc-error`: the code and its status.
   */
  readonly refusal?: Refusal;
}

/** What a parameter's refusal knows of the request: the route's path parameters (decoded) and the caller's workspace (null on a public route). */
export interface RefusedRequest {
  readonly params: Readonly<Record<string, string>>;
  readonly workspace: string | null;
}

export interface Refusal {
  /** The code of the error `refuse` gives; its status comes from core/model/errors.ts. */
  readonly code: ErrorCode;
  /** The error for `value`: undefined when a required query parameter is missing. */
  refuse(value: string | undefined, request: RefusedRequest): SvcError | Promise<SvcError>;
}

export interface RequestBody {
  readonly required?: boolean;
  readonly content: Content;
}

export interface Response {
  readonly description: string;
  readonly content?: Content;
  readonly headers?: Readonly<Record<string, { readonly schema: Schema; readonly description?: string }>>;
}

export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  /** Parameters written once on the path rather than on each operation: every route of the path declares the same. */
  readonly pathParameters?: readonly Parameter[];
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: RequestBody;
  /**
   * The JSON body's fields whose checks the handler, or the service it calls
   * (the dashboard calls the same services), makes in words of its own: by
   * field, the schema keywords the router leaves to it. Not in docs/openapi.json.
   */
  readonly leftToHandler?: Readonly<Record<string, readonly string[]>>;
  /** By status code; 401 and 413 as every route of its kind gives them unless it says otherwise (openapi.ts). */
  readonly responses: Readonly<Record<number, Response>>;
}
