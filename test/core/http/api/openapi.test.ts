import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { declaredParameters } from '../../../../core/http/api/declared-parameters.js';
import { compileDeclared } from '../../../../core/http/api/declared-schemas.js';
import { metaSchemaErrors } from '../../../../core/model/schema/ajv.js';
import { API_PREFIX, apiRoutes } from '../../../../core/http/api/index.js';
import { declaredResponses, openApiDocument, openApiText } from '../../../../core/http/api/openapi.js';
import { packageRoot } from '../../../../core/model/paths.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];
const openapi = JSON.parse(readFileSync(path.join(packageRoot, 'docs', 'openapi.json'), 'utf8'));
const apiDoc = readFileSync(path.join(packageRoot, 'docs', 'api.md'), 'utf8');

/** `POST /api/v1/tokens/{id}`, the form both lists are compared in. */
const routeNames = () => apiRoutes.map((r) => `${r.method} ${API_PREFIX}${r.path.replace(/:(\w+)/g, '{$1}')}`).sort();
const documentedNames = () =>
  Object.entries(openapi.paths as Record<string, Record<string, unknown>>)
    .flatMap(([p, item]) =>
      Object.keys(item)
        .filter((key) => METHODS.includes(key))
        .map((method) => `${method.toUpperCase()} ${p}`),
    )
    .sort();

/** Where `a` and `b` first differ (`paths > /api/v1/whoami > get > summary`), or null when they are deeply equal. */
function firstDifference(a: unknown, b: unknown, at: readonly string[] = []): string | null {
  if (isDeepStrictEqual(a, b)) return null;
  const objects = typeof a === 'object' && typeof b === 'object' && a !== null && b !== null && Array.isArray(a) === Array.isArray(b);
  for (const key of objects ? new Set([...Object.keys(a), ...Object.keys(b)]) : []) {
    const found = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], [...at, key]);
    if (found !== null) return found;
  }
  return at.join(' > ') || 'the whole document';
}

describe('docs/openapi.json and docs/api.md', () => {
  it('docs/openapi.json is what the route declarations generate', () => {
    const generated = JSON.parse(openApiText(openApiDocument(apiRoutes)));
    const where = firstDifference(openapi, generated);
    assert.equal(
      where,
      null,
      `docs/openapi.json is stale (it first differs at ${where}): it is generated from the routes' declarations (\`openapi\` in core/http/api/<resource>.ts, core/http/api/openapi/schemas.ts), so change those and run \`npm run openapi\`.`,
    );
  });

  // A server compiles a route's schemas when the route is first asked for: here all of them are, so a schema Ajv refuses fails.
  it("compile every route's request body and parameter schemas with svc's Ajv (strict mode), and the meta-schema finds nothing wrong with them nor with the answers' schemas", () => {
    let compiled = 0;
    for (const route of apiRoutes) {
      const where = `${route.method} ${route.path}`;
      const body = route.openapi.requestBody?.content['application/json']?.schema;
      const schemas = [...(body === undefined ? [] : [body]), ...declaredParameters(route).map((parameter) => parameter.schema)];
      for (const schema of schemas) {
        assert.doesNotThrow(() => compileDeclared(schema), where);
        assert.equal(metaSchemaErrors(schema), null, where);
        compiled += 1;
      }
      // The answers' schemas, which the e2e tests compile to check every answer, against the meta-schema too.
      for (const [status, response] of Object.entries(declaredResponses(route)))
        for (const media of Object.values(response.content ?? {})) assert.equal(metaSchemaErrors(media.schema), null, `${where} ${status}`);
    }
    assert.ok(compiled > 50, `only ${compiled} schemas`);
  });

  it('describe every route of the router, and no other', () => {
    assert.deepEqual(documentedNames(), routeNames());
  });

  it('mark exactly the public routes as needing no token', () => {
    assert.deepEqual(openapi.security, [{ bearer: [] }]);
    for (const route of apiRoutes) {
      const operation = openapi.paths[`${API_PREFIX}${route.path.replace(/:(\w+)/g, '{$1}')}`][route.method.toLowerCase()];
      if (route.auth === 'none') assert.deepEqual(operation.security, [], `${route.method} ${route.path} is public`);
      else {
        assert.equal(operation.security, undefined, `${route.method} ${route.path} needs the bearer token`);
        assert.ok(operation.responses['401'], `${route.method} ${route.path} documents 401`);
      }
      if (route.body !== 'none') assert.ok(operation.responses['413'], `${route.method} ${route.path} documents 413`);
    }
  });

  it('resolve every $ref', () => {
    const refs = [...JSON.stringify(openapi).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)].map((m) => m[1]!);
    assert.ok(refs.length > 10);
    for (const name of refs) assert.ok(openapi.components.schemas[name], `schema ${name} exists`);
  });

  it('docs/api.md has a section for every route', () => {
    for (const route of apiRoutes) {
      const heading = `### \`${route.method} ${API_PREFIX}${route.path}\``;
      assert.ok(apiDoc.includes(heading), `docs/api.md lacks ${heading}`);
    }
  });
});
