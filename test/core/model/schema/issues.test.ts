import assert from 'node:assert/strict';
import { compile, defineChecks } from '../../../../core/model/schema/ajv.js';
import { issuesOf } from '../../../../core/model/schema/issues.js';

defineChecks({
  // Reports below the checked value, as cross-field checks do.
  evenLength: (value, report) => {
    if (Array.isArray(value) && value.length % 2 === 1) report('has an odd number of items', value.length - 1);
  },
});

const validate = compile({
  type: 'object',
  required: ['size', 'tags', 'mode'],
  additionalProperties: false,
  'x-svc-key-noun': 'setting',
  properties: {
    size: { type: 'integer', minimum: 1, maximum: 9 },
    tags: { type: 'array', items: { type: 'string' }, 'x-svc-check': 'evenLength' },
    mode: { enum: ['fast', 'slow'] },
    note: { type: ['null', 'string'], minLength: 2, 'x-svc-messages': { minLength: 'must be null or {json} longer' } },
    'odd key': { type: 'boolean' },
  },
});

function issues(value: unknown): string[] {
  return validate(value) ? [] : issuesOf(value, validate.errors).map((issue) => `${issue.path}: ${issue.message}`);
}

describe('core/model/schema/issues.ts: Ajv errors as svc issues', () => {
  it('says nothing about a valid value', () => {
    assert.deepEqual(issues({ size: 3, tags: ['a', 'b'], mode: 'fast', note: null }), []);
  });

  it("writes paths as svc does and lists an object's unknown keys, then its missing ones, then its values in order", () => {
    assert.deepEqual(issues({ tags: ['a', 7, 'c'], extra: 1, size: 1.5, 'odd key': 'x' }), [
      'extra: unknown setting; allowed: size, tags, mode, note, odd key',
      'mode: missing setting',
      'tags[1]: must be a string, got number',
      'tags[2]: has an odd number of items',
      'size: must be an integer, got 1.5',
      '["odd key"]: must be a boolean, got string',
    ]);
  });

  it("names ranges, allowed values, types and the schema's own messages", () => {
    assert.deepEqual(issues({ size: 10, tags: [], mode: 'medium', note: 'x' }), [
      'size: must be an integer from 1 to 9, got 10',
      'mode: must be one of fast, slow, got "medium"',
      'note: must be null or "x" longer',
    ]);
    assert.deepEqual(issues({ size: 1, tags: [], mode: 3, note: 4 }), [
      'mode: must be one of fast, slow, got number',
      'note: must be null or a string, got number',
    ]);
    assert.deepEqual(issues([]), ['(root): must be an object, got array']);
  });
});
