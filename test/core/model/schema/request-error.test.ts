import assert from 'node:assert/strict';
import { compile } from '../../../../core/model/schema/ajv.js';
import { schemaError } from '../../../../core/model/schema/request-error.js';

const body = compile({
  type: 'object',
  required: ['name', 'values'],
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    values: { type: 'object', additionalProperties: { type: 'string' } },
    replace: { type: ['boolean', 'null'] },
    idle: { type: ['integer', 'null'], minimum: 1, maximum: 100 },
  },
});

/** The message and field `value` gets, or null when it passes. */
function refusal(value: unknown, leftToReader?: Record<string, string[]>): { message: string; field: unknown } | null {
  if (body(value)) return null;
  const error = schemaError(body, leftToReader === undefined ? {} : { leftToReader });
  return error === null ? null : { message: error.message, field: (error.details as { field?: unknown }).field };
}

describe('core/model/schema/request-error.ts: the first fault of a request body in svc words', () => {
  it('words each error as the API always has, naming the field', () => {
    const ok = { name: 'a', values: {} };
    assert.equal(refusal(ok), null);
    assert.deepEqual(refusal({ ...ok, scope: 1 }), {
      message: 'unknown field "scope"; this route takes "name", "values", "replace", "idle".',
      field: 'scope',
    });
    assert.deepEqual(refusal({ values: {} }), { message: 'the field "name" is required.', field: 'name' });
    assert.deepEqual(refusal({ ...ok, name: null }), { message: 'the field "name" is required.', field: 'name' });
    assert.deepEqual(refusal({ ...ok, name: 42 }), { message: 'the field "name" must be a string, not number.', field: 'name' });
    assert.deepEqual(refusal({ ...ok, name: ['a'] }), { message: 'the field "name" must be a string, not an array.', field: 'name' });
    assert.deepEqual(refusal({ ...ok, replace: 'yes' }), {
      message: 'the field "replace" must be true or false, not "yes".',
      field: 'replace',
    });
    assert.equal(refusal({ ...ok, replace: null }), null);
    for (const idle of [0, 101, 1.5, '60']) {
      assert.deepEqual(refusal({ ...ok, idle }), {
        message: `the field "idle" must be a whole number from 1 to 100, not ${JSON.stringify(idle)}.`,
        field: 'idle',
      });
    }
  });

  it('reports an unknown field first, then the fields in the order the schema lists them', () => {
    assert.match(refusal({ idle: 0, replace: 1, extra: true })!.message, /^unknown field "extra"/);
    assert.match(refusal({ idle: 0, replace: 1 })!.message, /"name" is required/);
    assert.match(refusal({ name: 'a', values: {}, idle: 0, replace: 1 })!.message, /"replace" must be true or false/);
  });

  it('leaves the keywords a reader checks itself to it', () => {
    assert.equal(refusal({ name: 'a', values: { A: 7 } }, { values: ['type'] }), null);
    assert.match(refusal({ name: 'a', values: { A: 7 } })!.message, /the field "values\.A" must be a string, not number/);
    assert.match(refusal({ values: {} }, { name: ['type'] })!.message, /"name" is required/);
    assert.equal(refusal({ values: {} }, { name: ['required'] }), null);
  });
});
