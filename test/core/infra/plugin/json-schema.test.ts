import assert from 'node:assert/strict';
import { canonical, isSchema, resolveRef, withDefs } from '../../../../core/infra/plugin/json-schema.js';

describe('svc/plugin JSON Schema helpers', () => {
  it('isSchema: objects only', () => {
    assert.deepEqual([{}, { type: 'string' }, [], null, true, 'x'].map(isSchema), [true, true, false, false, false, false]);
  });

  it('canonical: equal schemas give equal text, whatever their key order', () => {
    assert.equal(canonical({ b: [1, { d: 1, c: 2 }], a: null }), canonical({ a: null, b: [1, { c: 2, d: 1 }] }));
    assert.notEqual(canonical({ a: 1 }), canonical({ a: '1' }));
  });

  it('resolveRef: the innermost $defs (or definitions) holding the name, ~1 and ~0 unescaped; null for other refs', () => {
    const outer = withDefs({ $defs: { A: { type: 'string' }, 'a/b~c': { type: 'integer' } } }, null);
    const inner = withDefs({ definitions: { A: { type: 'boolean' } } }, outer);
    assert.deepEqual(resolveRef('#/$defs/A', inner)?.target, { type: 'boolean' });
    assert.equal(resolveRef('#/definitions/A', inner)?.defs, inner);
    assert.deepEqual(resolveRef('#/$defs/a~1b~0c', inner)?.target, { type: 'integer' });
    assert.equal(
      resolveRef('#/$defs/A', inner)?.key,
      resolveRef('#/$defs/A', withDefs({ definitions: { A: { type: 'boolean' } } }, null))?.key,
      'equal definitions, equal key',
    );
    assert.equal(resolveRef('#/$defs/Missing', inner), null);
    assert.equal(resolveRef('https://example.com/schema#/$defs/A', inner), null);
    assert.equal(withDefs({ type: 'string' }, outer), outer, "a schema without $defs keeps its parent's");
  });
});
