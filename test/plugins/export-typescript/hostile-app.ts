/**
 * An app whose every name, doc and string is hostile to TypeScript: exporter.test.ts reads what
 * the exporter writes for it, compile.test.ts compiles it (HOSTILE_CONSUMER uses each method).
 */
import type { AppInterface, InterfaceApi, InterfaceOperation, InterfaceWorkload } from '../../../core/infra/plugin/types.js';
import { fixtureInterface } from './ts-helpers.js';

/** Calls each workload and operation of the hostile app's package, from the folder above svc-clients/. */
export const HOSTILE_CONSUMER = [
  "import { createClient, delete_, newThing, api, type Promise2 } from './svc-clients/we-ird/index.js';",
  "export const calls = [delete_.request({ 'x\"y': 'a', default: 1 }), newThing.connect(), api.request2(), api.deleteItem({ 'item-id': 1 }), api.upload({ body2: 'text', body: 'q' }), createClient().api.bad()];",
  "export const value: Promise2 = { \"it's\": '*/' };",
].join('\n');

/** An app whose every name, doc and string is hostile to TypeScript. */
export function hostile(): AppInterface {
  const base = fixtureInterface('quickstart').workloads[0]!;
  const workload = (name: string, overrides: Partial<InterfaceWorkload>): InterfaceWorkload => ({ ...base, name, api: null, ...overrides });
  const operation = (name: string, overrides: Partial<InterfaceOperation>): InterfaceOperation => ({
    name,
    operationId: null,
    method: 'GET',
    path: '/x',
    summary: null,
    description: null,
    deprecated: false,
    parameters: [],
    body: null,
    result: { status: 200, contentType: 'application/json', schema: {} },
    ...overrides,
  });
  const api: InterfaceApi = {
    openapi: {},
    source: '/openapi.json',
    capturedAt: '2026-01-01T00:00:00Z',
    definitions: { 'Bad */ Name': { type: 'object', properties: { 'a b': { type: 'string' } } } },
    operations: [
      operation('request', { description: 'Clashes with request(). */ oops' }),
      operation('delete_item', {
        method: 'DELETE',
        path: '/items/{item-id}',
        parameters: [{ name: 'item-id', in: 'path', required: true, schema: { type: 'integer' }, description: null }],
        result: { status: 204, contentType: null, schema: null },
        deprecated: true,
      }),
      operation('upload', {
        method: 'POST',
        parameters: [
          { name: 'body', in: 'query', required: false, schema: { type: 'string' }, description: null },
          { name: 'x-trace', in: 'header', required: false, schema: { type: 'string' }, description: null },
        ],
        body: { contentType: 'text/plain', required: true, schema: {} },
        result: { status: 200, contentType: 'text/plain', schema: null },
      }),
      operation('bad', { result: { status: 200, contentType: 'application/json', schema: { $ref: '#/$defs/Bad */ Name' } } }),
    ],
  };
  return {
    app: 'we*/ird',
    generatedFrom: { versions: { delete: 1, 'new-thing': 2, api: 1 } },
    workloads: [
      workload('delete', {
        doc: 'Ends */ the comment? "quotes" and \\ backslashes.',
        parameters: { type: 'object', properties: { 'x"y': { type: 'string' }, default: { type: 'integer' } }, required: ['x"y'] },
        returns: { type: 'object', title: 'Promise', properties: { "it's": { const: '*/' } } },
      }),
      workload('new-thing', { kind: 'realtime', parameters: { type: 'object', properties: { m: {} } }, returns: {} }),
      workload('api', { kind: 'asgi', parameters: null, returns: null, api }),
    ],
  };
}
