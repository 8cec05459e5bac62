/**
 * The app whose ASGI workloads have operations, exported from fixtures alone: `api` with the
 * FastAPI example's OpenAPI description (test/fixtures/openapi/fastapi-todos.json), `odd` with
 * names that must not hide the object's own attributes, and `plain` with none. Its client is
 * svc_clients.todos: operations.test.ts calls it, test/e2e/app-export-types.test.ts type-checks it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AppInterface, InterfaceWorkload } from '../../../core/infra/plugin/types.js';
import { packageRoot } from '../../../core/model/paths.js';
import { normalizeApi } from '../../../core/services/app-api/normalize.js';

const fastapi = JSON.parse(readFileSync(path.join(packageRoot, 'test', 'fixtures', 'openapi', 'fastapi-todos.json'), 'utf8')) as Record<
  string,
  unknown
>;

/** Names that must not hide the object's own attributes, a keyword, a header, a form, a 3.0 nullable. */
const odd = {
  openapi: '3.0.3',
  paths: {
    '/request': { get: { operationId: 'request', responses: { '200': { content: { 'text/plain': {} } } } } },
    '/connect/{class}': {
      post: {
        operationId: 'connect',
        parameters: [
          { name: 'class', in: 'path', schema: { type: 'string' } },
          { name: 'X-Token', in: 'header', required: true, schema: { type: 'string' } },
        ],
        requestBody: { content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } },
        responses: { '200': { content: { 'application/json': { schema: { type: 'integer', nullable: true } } } } },
      },
    },
    '/import': { put: { operationId: 'import', parameters: [{ name: 'self', in: 'query', schema: { type: 'integer' } }], responses: {} } },
  },
};

function asgi(name: string, document: Record<string, unknown> | null): InterfaceWorkload {
  return {
    name,
    kind: 'asgi',
    doc: null,
    url: `http://127.0.0.1/default/todos/${name}`,
    path: `/default/todos/${name}`,
    hostUrl: null,
    methods: [],
    route: '/',
    authorized: true,
    parameters: null,
    returns: null,
    status: 'running',
    api: document === null ? null : normalizeApi({ source: '/openapi.json', capturedAt: '2026-11-27T00:00:00.000Z', document }).api,
  };
}

export const OPERATIONS_APP: AppInterface = {
  app: 'todos',
  generatedFrom: { versions: { api: 3, odd: 1, plain: 1 } },
  workloads: [asgi('api', fastapi), asgi('odd', odd), asgi('plain', null)],
};
