import assert from 'node:assert/strict';
import { NAME_PATTERN, nameProblem, RESERVED_WORKSPACE_NAMES, WORKSPACE_NAME_PATTERN } from '../../../core/model/names.js';
import { compile } from '../../../core/model/schema/ajv.js';

const SAMPLES = [
  ...['a', '0', 'ab', 'a-b', 'a-b-c', 'acme-prod', '9lives', 'a'.repeat(63), `a${'-b'.repeat(31)}`],
  ...['', 'A', 'Shop', 'a_b', 'a.b', 'a b', '-a', 'a-', '-', 'a--b', 'a'.repeat(64), 'é', 'a/b', '..', 'a\n'],
  ...RESERVED_WORKSPACE_NAMES,
  ...RESERVED_WORKSPACE_NAMES.map((name) => `${name}s`),
];

describe('the naming rule as a pattern', () => {
  for (const [kind, pattern] of [
    ['app', NAME_PATTERN],
    ['workspace', WORKSPACE_NAME_PATTERN],
  ] as const) {
    it(`takes exactly the ${kind} names nameProblem takes (through the one Ajv, as the API checks them)`, () => {
      const validate = compile({ type: 'string', pattern });
      for (const name of SAMPLES) assert.equal(validate(name), nameProblem(name, kind) === null, JSON.stringify(name));
    });
  }
});
