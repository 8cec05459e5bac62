/**
 * Checks each answer the tests get from the control-plane API against what
 * its route declares for that status (`ApiRoute.openapi`): a JSON body against
 * its JSON schema, each line of an NDJSON one against the line's schema. An
 * error status a route does not declare must still be svc's error shape; a
 * success it does not declare, or a JSON body where it declares none, is
 * drift too. The API clients of the tests call it on every answer, so an
 * answer that drifts from its declaration fails the test that got it.
 */
import { compileDeclared } from '../../../../core/http/api/declared-schemas.js';
import { API_PREFIX, apiRoutes } from '../../../../core/http/api/index.js';
import { declaredResponses } from '../../../../core/http/api/openapi.js';
import type { Schema } from '../../../../core/http/api/openapi/types.js';
import type { ApiRoute } from '../../../../core/http/api/types.js';
import type { ValidateFunction } from '../../../../core/model/schema/ajv.js';

const ERROR: Schema = { $ref: '#/components/schemas/Error' };
const compiled = new Map<Schema, ValidateFunction>();
const matchers = apiRoutes.map((route) => ({ route, path: new RegExp(`^${API_PREFIX}${route.path.replace(/:\w+/g, '[^/]+')}$`) }));

/** Throws when the answer to `method url` is not what the route declares for `status`. */
export function checkAnswer(method: string, url: string, status: number, contentType: string | null, text: string): void {
  const path = new URL(url, 'http://svc.invalid').pathname;
  if (method === 'HEAD' || text === '' || (path !== '/api' && !path.startsWith('/api/'))) return;
  const route = matchers.find((m) => m.route.method === method && m.path.test(path))?.route;
  const type = (contentType ?? '').split(';', 1)[0]!.trim();
  const where = `${method} ${path} answered ${status}`;
  const declared = route === undefined ? undefined : declaredResponses(route)[status];
  const schema = declared === undefined ? undeclared(route, status, where) : declared.content?.[type]?.schema;
  if (type === 'application/json' && schema === undefined) throw new Error(`${where} with JSON, which its route does not declare: ${text}`);
  if (schema === undefined) return;
  if (type === 'application/json') check(schema, JSON.parse(text), where);
  else if (type === 'application/x-ndjson')
    for (const line of text.split('\n').filter((l) => l !== '')) check(schema, JSON.parse(line), where);
}

/** The schema of an answer its route does not declare: an error in svc's shape; no success. */
function undeclared(route: ApiRoute | undefined, status: number, where: string): Schema {
  if (status >= 400) return ERROR;
  throw new Error(`${where}, a status ${route === undefined ? 'no route' : 'its route'} does not declare`);
}

function check(schema: Schema, body: unknown, where: string): void {
  let validate = compiled.get(schema);
  if (validate === undefined) compiled.set(schema, (validate = compileDeclared(schema)));
  if (validate(body)) return;
  const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(the body)'} ${e.message ?? ''}`).join('; ');
  throw new Error(`${where} with a body its declaration refuses (${problems}): ${JSON.stringify(body)}`);
}
