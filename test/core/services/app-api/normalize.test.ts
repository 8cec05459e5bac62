import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { normalizeApi, notOpenApi } from '../../../../core/services/app-api/normalize.js';
import { operationName, snakeCase, withoutFastApiTail } from '../../../../core/services/app-api/operation-names.js';
import { packageRoot } from '../../../../core/model/paths.js';

/** What FastAPI 0.1xx serves at /openapi.json for examples/asgi-fastapi (OpenAPI 3.1). */
const fastapi = JSON.parse(readFileSync(path.join(packageRoot, 'test', 'fixtures', 'openapi', 'fastapi-todos.json'), 'utf8')) as Record<
  string,
  unknown
>;

const normalize = (document: Record<string, unknown>) =>
  normalizeApi({ source: '/openapi.json', capturedAt: '2026-11-27T00:00:00.000Z', document });

describe('normalizeApi()', () => {
  it("gives each operation of FastAPI's description the function's name, its parameters, body and typed result", () => {
    const { api, skipped } = normalize(fastapi);
    assert.deepEqual(skipped, []);
    assert.deepEqual(
      api.operations.map((o) => [o.name, o.method, o.path]),
      [
        ['list_todos', 'GET', '/todos'],
        ['create_todo', 'POST', '/todos'],
        ['get_todo', 'GET', '/todos/{todo_id}'],
        ['delete_todo', 'DELETE', '/todos/{todo_id}'],
      ],
    );
    const [list, create, get, remove] = api.operations;
    assert.deepEqual(list!.parameters, [
      {
        name: 'done',
        in: 'query',
        required: false,
        schema: { anyOf: [{ type: 'boolean' }, { type: 'null' }], title: 'Done' },
        description: null,
      },
    ]);
    assert.deepEqual(list!.result, {
      status: 200,
      contentType: 'application/json',
      schema: { type: 'array', items: { $ref: '#/$defs/Todo' }, title: 'Response List Todos Todos Get' },
    });
    assert.deepEqual(create!.body, { contentType: 'application/json', required: true, schema: { $ref: '#/$defs/TodoIn' } });
    assert.equal(create!.result.status, 201);
    assert.equal(create!.operationId, 'create_todo_todos_post');
    assert.equal(create!.summary, 'Create Todo');
    assert.deepEqual(
      get!.parameters.map((p) => [p.name, p.in, p.required, p.schema]),
      [['todo_id', 'path', true, { type: 'integer', title: 'Todo Id' }]],
    );
    assert.deepEqual(remove!.result, { status: 204, contentType: null, schema: null });
    // components.schemas, their own references rewritten too.
    assert.deepEqual(Object.keys(api.definitions), ['HTTPValidationError', 'Todo', 'TodoIn', 'ValidationError']);
    assert.deepEqual((api.definitions.HTTPValidationError!.properties as any).detail.items, { $ref: '#/$defs/ValidationError' });
    assert.equal(api.openapi, fastapi);
    assert.equal(api.source, '/openapi.json');
  });

  it('reads OpenAPI 3.0: nullable becomes a union with null, components parameters, bodies and responses are resolved, cookies dropped', () => {
    const { api, skipped } = normalize({
      openapi: '3.0.3',
      paths: {
        '/pets/{petId}': {
          parameters: [{ $ref: '#/components/parameters/PetId' }],
          put: {
            operationId: 'updatePet',
            parameters: [
              { name: 'session', in: 'cookie', schema: { type: 'string' } },
              { name: 'X-Trace', in: 'header', schema: { type: 'string', nullable: true } },
              { name: 'dry', in: 'query', required: true, schema: { type: 'boolean' } },
            ],
            requestBody: { $ref: '#/components/requestBodies/PetBody' },
            responses: { '400': { description: 'bad' }, '200': { $ref: '#/components/responses/PetAnswer' } },
          },
        },
      },
      components: {
        parameters: { PetId: { name: 'petId', in: 'path', required: true, schema: { type: 'integer' } } },
        requestBodies: { PetBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } },
        responses: { PetAnswer: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } },
        schemas: {
          Pet: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string' },
              nullable: { type: 'boolean' },
              owner: { allOf: [{ $ref: '#/components/schemas/Owner' }], nullable: true, description: 'who' },
              tag: { type: 'string', nullable: true, default: 'x' },
            },
          },
          Owner: { type: 'object', properties: { id: { type: 'integer' } } },
        },
      },
    });
    assert.deepEqual(skipped, []);
    const [update] = api.operations;
    assert.equal(update!.name, 'update_pet');
    assert.deepEqual(
      update!.parameters.map((p) => [p.name, p.in, p.required]),
      [
        ['petId', 'path', true],
        ['dry', 'query', true],
        ['X-Trace', 'header', false],
      ],
    );
    assert.deepEqual(update!.parameters[2]!.schema, { anyOf: [{ type: 'string' }, { type: 'null' }] });
    assert.deepEqual(update!.body, { contentType: 'application/json', required: true, schema: { $ref: '#/$defs/Pet' } });
    assert.deepEqual(update!.result, { status: 200, contentType: 'application/json', schema: { $ref: '#/$defs/Pet' } });
    const pet = api.definitions.Pet!.properties as Record<string, unknown>;
    // A property named `nullable` is a name, not the keyword.
    assert.deepEqual(pet.nullable, { type: 'boolean' });
    assert.deepEqual(pet.owner, { description: 'who', anyOf: [{ allOf: [{ $ref: '#/$defs/Owner' }] }, { type: 'null' }] });
    assert.deepEqual(pet.tag, { default: 'x', anyOf: [{ type: 'string' }, { type: 'null' }] });
  });

  it('names operations without an operationId from method and path, and tells equal names apart in document order', () => {
    const { api } = normalize({
      openapi: '3.1.0',
      paths: {
        '/items/{item_id}': { get: { responses: {} }, post: { operationId: 'save', responses: {} } },
        '/other': { post: { operationId: 'save', responses: {} }, put: { operationId: 'Save', responses: {} } },
        '/': { get: { operationId: '3d-view', responses: {} }, head: { operationId: '!!!', responses: {} } },
      },
    });
    assert.deepEqual(
      api.operations.map((o) => o.name),
      ['get_items_item_id', 'save', 'save_2', 'save_3', 'op_3d_view', 'head'],
    );
    // No 2xx listed: any JSON, status 200.
    assert.deepEqual(api.operations[0]!.result, { status: 200, contentType: 'application/json', schema: {} });
  });

  it('adds a path placeholder nobody described as a string parameter (a Starlette route may describe none)', () => {
    const { api } = normalize({
      openapi: '3.0.0',
      paths: {
        '/users/{user}/posts/{post}': { get: { parameters: [{ name: 'post', in: 'path', schema: { type: 'integer' } }], responses: {} } },
      },
    });
    assert.deepEqual(
      api.operations[0]!.parameters.map((p) => [p.name, p.schema]),
      [
        ['user', { type: 'string' }],
        ['post', { type: 'integer' }],
      ],
    );
  });

  it('skips what it cannot understand and says so, without throwing: broken and circular references, odd entries, deep schemas', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 200; i++) deep = { type: 'array', items: deep };
    const { api, skipped } = normalize({
      openapi: '3.1.0',
      paths: {
        '/a': {
          get: {
            parameters: [
              { $ref: '#/components/parameters/Loop' },
              { $ref: '#/components/parameters/Missing' },
              { $ref: 'https://example.com/x.json#/P' },
              { in: 'query' },
              { name: 'm', in: 'matrix' },
              'nonsense',
            ],
            requestBody: { content: {} },
            responses: { '200': { content: { 'application/json': { schema: deep } } } },
          },
          trace: { responses: {} },
        },
        'not-a-path': { get: {} },
        '/b': { $ref: '#/paths/~1a' },
        '/c': {
          get: { parameters: 'x', responses: { '201': { content: { 'application/json': { schema: { $ref: 'other.json#/Thing' } } } } } },
        },
      },
      components: {
        parameters: { Loop: { $ref: '#/components/parameters/Loop' } },
        schemas: JSON.parse('{"__proto__": {"type": "string"}, "a/b": {"$ref": "#/components/schemas/a~1b"}}'),
      },
    });
    assert.deepEqual(
      api.operations.map((o) => o.name),
      ['get_a', 'get_c'],
    );
    assert.deepEqual(api.operations[0]!.parameters, []);
    assert.equal(api.operations[0]!.body, null);
    assert.deepEqual(api.operations[1]!.result.schema, {});
    assert.deepEqual(Object.keys(api.definitions).sort(), ['__proto__', 'a/b']);
    assert.deepEqual(api.definitions['a/b'], { $ref: '#/$defs/a~1b' });
    assert.equal(Object.getPrototypeOf(api.definitions), Object.prototype);
    for (const expected of [
      /refers back to itself/,
      /Missing.* names nothing/,
      /example\.com.*is not to #\/components\/parameters/,
      /a parameter without a name/,
      /in "matrix"/,
      /request body lists no content type/,
      /nests deeper than/,
      /not-a-path/,
      /path \/b: a \$ref path item/,
      /GET \/c: parameters is not a list/,
      /other\.json/,
    ]) {
      assert.ok(
        skipped.some((line) => expected.test(line)),
        `${expected} in:\n${skipped.join('\n')}`,
      );
    }
  });

  it('stops at 1000 operations and says so', () => {
    const paths = Object.fromEntries(
      Array.from({ length: 600 }, (_, i) => [`/p${i}`, { get: { responses: {} }, post: { responses: {} } }]),
    );
    const { api, skipped } = normalize({ openapi: '3.1.0', paths });
    assert.equal(api.operations.length, 1000);
    assert.match(skipped.join('\n'), /more than 1000 operations: GET \/p500 and the ones after it are left out/);
  });
});

describe('notOpenApi()', () => {
  it('accepts OpenAPI 3.0 and 3.1 and says why anything else is none', () => {
    assert.equal(notOpenApi({ openapi: '3.1.0' }), null);
    assert.equal(notOpenApi({ openapi: '3.0.2' }), null);
    assert.equal(notOpenApi({ swagger: '2.0' }), 'it is Swagger 2.0, not OpenAPI 3.x');
    assert.equal(notOpenApi({ openapi: '4.0.0' }), 'it is OpenAPI 4.0.0, not 3.0 or 3.1');
    assert.equal(notOpenApi([1]), 'it is not a JSON object');
    assert.equal(notOpenApi({ info: {} }), 'it has no "openapi" version');
  });
});

describe('operation names', () => {
  it("takes FastAPI's path-and-method tail off its default operationIds, and only that", () => {
    assert.equal(withoutFastApiTail('read_item_items__item_id__get', 'get', '/items/{item_id}'), 'read_item');
    assert.equal(withoutFastApiTail('read_item', 'get', '/items/{item_id}'), 'read_item');
    // Nothing but the tail: nothing to take it from.
    assert.equal(withoutFastApiTail('_items__item_id__get', 'get', '/items/{item_id}'), '_items__item_id__get');
    assert.equal(operationName('list_todos_todos_get', 'get', '/todos'), 'list_todos');
    assert.equal(operationName(null, 'delete', '/todos/{todo_id}'), 'delete_todos_todo_id');
  });

  it('makes snake_case identifiers', () => {
    assert.equal(snakeCase('listPets'), 'list_pets');
    assert.equal(snakeCase('HTTPServerGet'), 'http_server_get');
    assert.equal(snakeCase('Get-Item.v2'), 'get_item_v2');
    assert.equal(snakeCase('2fa'), 'op_2fa');
    assert.equal(snakeCase('é'), '');
    assert.equal(snakeCase('x'.repeat(200)).length, 80);
  });
});
