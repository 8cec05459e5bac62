/**
 * What the routes' OpenAPI facts share: pointers into schemas.ts, JSON
 * bodies, errors in svc's shape, and the answers and path parameters that
 * read the same on every route that has them.
 */
import { SvcError } from '../../../model/errors.js';
import { NAME_PATTERN, NAME_RULE, nameInvalid, nameProblem } from '../../../model/names.js';
import type { Content, Parameter, Refusal, Response, Schema } from './types.js';

/** One of schemas.ts, by name (a test checks that each one exists). */
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

export const json = (schema: Schema): Content => ({ 'application/json': { schema } });

/** An object of one field, `{"<name>": …}`: the shape of most answers. */
export const holding = (name: string, schema: Schema): Schema => ({
  type: 'object',
  required: [name],
  additionalProperties: false,
  properties: { [name]: schema },
});

/** An object holding a list, `{"<name>": [<schema>, …]}`. */
export const listOf = (name: string, item: Schema): Schema => holding(name, { type: 'array', items: item });

/** A JSON answer. */
export const answer = (description: string, schema: Schema): Response => ({ description, content: json(schema) });

/** An error in svc's shape, `{"error": {"code", "message", "hint"}}` (docs/errors.md). */
export const error = (description: string): Response => answer(description, ref('Error'));

/**
 * An optional whole-number query parameter, as the query spells it (no sign, no leading zero): `pattern`
 * is its range as a regular expression, `range` the same in words ("from 1 to 1000").
 */
export const wholeNumber = (name: string, pattern: string, range: string, description: string, hint?: string): Parameter => ({
  name,
  in: 'query',
  required: false,
  schema: { type: 'string', pattern },
  description,
  refusal: {
    code: 'bad_request',
    refuse: (value) =>
      new SvcError('bad_request', `${name}=${JSON.stringify(value)} is not a whole number ${range}.`, {
        ...(hint === undefined ? {} : { hint }),
        details: { field: name },
      }),
  },
});

// Answers that read the same on every route that gives them.
export const UNAUTHORIZED: Response = error('`unauthorized`: no bearer token, or one that is malformed, unknown, expired or revoked.');
export const BAD_QUERY: Response = error('`bad_request`: a query parameter.');
export const BAD_JSON_BODY: Response = error(
  '`bad_request` (an unknown field, a wrong type, a missing field, a value out of range, a body that is not a JSON object or not JSON, a query parameter) or `invalid_json`.',
);
export const TOO_LARGE: Response = error('`payload_too_large`: the body is over 1 MiB.');
export const RATE_LIMITED: Response = error(
  '`rate_limited`: this address sent more requests to this route than it takes a minute; `Retry-After` says when to try again.',
);
export const NAME_INVALID: Response = error('`name_invalid`: a name in the path is not a lowercase DNS label.');
export const MANIFEST_INVALID: Response = error(
  "`manifest_invalid` (every issue with its path in `details.issues`), `name_invalid` (the app or a workload name is not a lowercase DNS label), `bundle_invalid` (the bundle lacks the manifest's module).",
);
export const NO_SUCH_DEPLOYMENT: Response = error("`not_found`: the caller's workspace has no such app, or the app no such deployment.");
export const SHUTTING_DOWN: Response = error('`shutting_down`: svc is stopping and starts nothing new (`Retry-After: 5`).');

/** What a deploy, a preview and a run leave to the handler: the manifest's checks (`manifest_invalid`), a sha256's, names' (`name_invalid`), inline secrets'. */
export const CODE_CHECKS = { manifest: ['type'], bundle: ['pattern'], workload: ['type'], inlineSecrets: ['type'] } as const;

// Path parameters of several resources.

/**
 * How a `kind` name in a path that breaks svc's naming rule is answered:
 * `name_invalid` (`invalid`, the kind's own wording), saying how it breaks it.
 */
export const nameRefusal = (
  kind: string,
  invalid: (name: unknown, problem: string) => SvcError = (name, problem) => nameInvalid(kind, name, problem),
): Refusal => ({
  code: 'name_invalid',
  // The pattern and nameProblem agree (test/core/model/names.test.ts): a refused name has a problem.
  refuse: (value) => invalid(value, nameProblem(value, kind) ?? `is not ${NAME_RULE}`),
});

/**
 * The `:id` path parameter of a run, map or call: `source` is its pattern; a value that is not
 * one is `bad_request`, saying what such ids look like (`example`) and where to find them (`hint`).
 */
export function idParameter(kind: string, source: string, example: string, hint: string): Parameter {
  return {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: `^${source}$` },
    description: `The ${kind}'s id.`,
    refusal: {
      code: 'bad_request',
      refuse: (id) => new SvcError('bad_request', `${JSON.stringify(id)} is not a ${kind} id; ${kind} ids look like ${example}.`, { hint }),
    },
  };
}

export const APP: Parameter = {
  name: 'app',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: NAME_PATTERN },
  description: "The app's name (a lowercase DNS label).",
  refusal: nameRefusal('app'),
};
export const WORKLOAD: Parameter = {
  name: 'workload',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: NAME_PATTERN },
  description: "The workload's name (a lowercase DNS label).",
  refusal: nameRefusal('workload'),
};
/** A bundle's sha256, as the store names it. */
export const SHA256_SCHEMA: Schema = { type: 'string', pattern: '^[0-9a-f]{64}$' };

/** A logs route's answer: the kept lines as JSON, or followed as Server-Sent Events. */
export const LOG_LINES: Content = {
  'application/json': { schema: { type: 'object', required: ['lines'], properties: { lines: { type: 'array', items: ref('LogLine') } } } },
  'text/event-stream': { schema: { type: 'string' } },
};
