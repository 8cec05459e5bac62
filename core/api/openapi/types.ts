/**
 * The OpenAPI 3.1 facts a route declares (`ApiRoute.openapi`), as plain data.
 * What follows from the route itself is not repeated here: its path, its
 * method and, for a public route, `security: []` are added by the generator
 * (core/api/openapi.ts).
 */

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
  /** By status code. */
  readonly responses: Readonly<Record<number, Response>>;
}
