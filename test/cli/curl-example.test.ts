import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { curlExample, exampleArguments } from '../../cli/curl-example.js';
import { shellQuote } from '../../cli/shell-quote.js';
import type { DeployedWorkload } from '../../core/services/deployments/types.js';

const workload = (overrides: Partial<DeployedWorkload>): DeployedWorkload => ({
  name: 'greet',
  kind: 'endpoint',
  url: 'http://127.0.0.1:7420/default/app/greet/greet',
  hostUrl: null,
  methods: ['POST'],
  authorized: true,
  parameters: {
    type: 'object',
    properties: { name: { type: 'string' }, excited: { type: 'boolean', default: false } },
    required: ['name'],
  },
  note: null,
  api: null,
  status: 'running',
  version: 1,
  unit: 'default/app/deployed@1/greet',
  ...overrides,
});

describe('shellQuote()', () => {
  it('survives a real shell unchanged, whatever the text holds', () => {
    for (const text of ["/tmp/it's here", 'a b $HOME `id` "q" \\ end', '{"name":"O\'Brien"}']) {
      assert.equal(execFileSync('bash', ['-c', `printf %s ${shellQuote(text)}`], { encoding: 'utf8' }), text);
    }
  });
});

describe('curlExample()', () => {
  it('POSTs JSON with every parameter and the bearer token for a protected endpoint', () => {
    assert.equal(
      curlExample(workload({}), { tokenExpression: '$(cat /t)' }),
      `curl -X POST -H "Authorization: Bearer $(cat /t)" -H 'Content-Type: application/json' -d '{"name":"example","excited":false}' 'http://127.0.0.1:7420/default/app/greet/greet'`,
    );
  });

  it('puts the arguments of a GET endpoint in the query string and sends no token to a public one', () => {
    const line = curlExample(
      workload({
        methods: ['GET'],
        authorized: false,
        parameters: { type: 'object', properties: { name: { type: 'string', default: 'world' } } },
      }),
      { tokenExpression: 'x' },
    );
    assert.equal(line, `curl 'http://127.0.0.1:7420/default/app/greet/greet?name=world'`);
  });

  it('prints nothing for a workload without a URL', () => {
    assert.equal(curlExample(workload({ url: null, kind: 'function' }), { tokenExpression: 'x' }), null);
  });
});

describe('exampleArguments()', () => {
  it('uses defaults, then enums, then the first type of a union, then a placeholder per type', () => {
    assert.deepEqual(
      exampleArguments({
        type: 'object',
        properties: {
          a: { type: 'integer', default: 7 },
          b: { enum: ['x', 'y'] },
          c: { anyOf: [{ type: 'number' }, { type: 'null' }] },
          d: { type: 'array' },
          e: {},
        },
      }),
      { a: 7, b: 'x', c: 1.5, d: [], e: null },
    );
    assert.deepEqual(exampleArguments(null), {});
  });
});
