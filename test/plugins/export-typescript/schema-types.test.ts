import assert from 'node:assert/strict';
import { camelName, jsDoc, NameScope, propertyKey, tsString, typeName } from '../../../plugins/export-typescript/names.js';
import { renderModels, TypeMapper, unionMembers } from '../../../plugins/export-typescript/schema-types.js';

const mapper = () => new TypeMapper(new NameScope(['Promise', 'greet']));
const map = (schema: unknown) => mapper().type(schema, 'Greet');

describe('svc:export-typescript TypeMapper#type(): JSON Schema → TypeScript type', () => {
  const table: [string, unknown, string][] = [
    ['{} (no annotation)', {}, 'unknown'],
    ['string', { type: 'string' }, 'string'],
    ['integer', { type: 'integer' }, 'number'],
    ['number', { type: 'number' }, 'number'],
    ['boolean', { type: 'boolean' }, 'boolean'],
    ['null', { type: 'null' }, 'null'],
    ['bytes in JSON (base64 text)', { type: 'string', contentEncoding: 'base64' }, 'string'],
    ['an array', { type: 'array', items: { type: 'integer' } }, 'number[]'],
    ['a bare array', { type: 'array' }, 'unknown[]'],
    [
      'an array of a union, parenthesised',
      { type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'null' }] } },
      '(number | null)[]',
    ],
    ['a tuple', { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string' }], minItems: 2, maxItems: 2 }, '[number, string]'],
    ['a dict', { type: 'object', additionalProperties: { type: 'number' } }, 'Record<string, number>'],
    ['a bare dict', { type: 'object' }, 'Record<string, unknown>'],
    ['an optional', { anyOf: [{ type: 'string' }, { type: 'null' }] }, 'string | null'],
    ['a union with null first', { anyOf: [{ type: 'null' }, { type: 'integer' }, { type: 'string' }] }, 'number | string | null'],
    ['oneOf', { oneOf: [{ type: 'boolean' }, { type: 'string' }] }, 'boolean | string'],
    ['a union of equal members, once', { anyOf: [{ type: 'integer' }, { type: 'number' }] }, 'number'],
    ['a union holding unknown', { anyOf: [{}, { type: 'integer' }] }, 'unknown'],
    ['an enum', { enum: ['a', 'b'] }, '"a" | "b"'],
    ['an enum of mixed scalars', { title: 'Color', enum: ['red', 1, 2.5, true] }, '"red" | 1 | 2.5 | true'],
    ['an enum with null', { enum: [null, 'a'] }, '"a" | null'],
    ['an enum of objects', { enum: [{ a: 1 }] }, 'unknown'],
    ['a const with quotes', { const: 'say "hi" */' }, '"say \\"hi\\" */"'],
    ['a list of type names', { type: ['integer', 'null'] }, 'number | null'],
    ['a single allOf', { allOf: [{ type: 'string' }] }, 'string'],
    ['an unknown type', { type: 'decimal' }, 'unknown'],
    ['an unresolved name', { title: 'SomethingElse' }, 'unknown'],
    ['a $ref to nowhere', { $ref: '#/$defs/Missing' }, 'unknown'],
    ['a $ref to an alias', { $defs: { Id: { type: 'integer' } }, $ref: '#/$defs/Id' }, 'number'],
    [
      'nested unions keep the inner null',
      { anyOf: [{ type: 'object', additionalProperties: { anyOf: [{ type: 'integer' }, { type: 'null' }] } }, { type: 'null' }] },
      'Record<string, number | null> | null',
    ],
  ];
  for (const [what, schema, expected] of table) {
    it(`maps ${what} to ${expected}`, () => assert.equal(map(schema), expected));
  }

  it('makes an interface of an object schema with properties, named by its title, once for equal schemas', () => {
    const types = mapper();
    const greeting = {
      type: 'object',
      title: 'Greeting',
      properties: { message: { type: 'string' }, length: { type: 'integer' } },
      required: ['message', 'length'],
    };
    assert.equal(types.type(greeting, 'Greet'), 'Greeting');
    assert.equal(types.type({ type: 'array', items: greeting }, 'Other'), 'Greeting[]');
    assert.deepEqual(
      types.models.map((m) => [m.name, m.fields.map((f) => [f.key, f.type, f.optional])]),
      [
        [
          'Greeting',
          [
            ['message', 'string', false],
            ['length', 'number', false],
          ],
        ],
      ],
    );
  });

  it('names an untitled object from its place, a second one of the same title apart, and never after a global type', () => {
    const types = mapper();
    assert.equal(types.type({ type: 'object', properties: { a: { type: 'integer' } } }, 'GreetResult'), 'GreetResult');
    assert.equal(types.type({ type: 'object', title: 'GreetResult', properties: { b: { type: 'string' } } }, 'X'), 'GreetResult2');
    assert.equal(
      types.type({ type: 'object', title: 'promise', properties: {} }, 'X'),
      'Promise2',
      'Promise<…> in the declarations stays the global',
    );
    assert.equal(types.type({ type: 'object', title: '3d point', properties: {} }, 'X'), 'T3dPoint');
  });

  it('follows $defs/$ref (pydantic), nested models and recursion; keys that are no identifiers are quoted, optional ones marked', () => {
    const types = mapper();
    const person = {
      $defs: {
        Address: {
          type: 'object',
          title: 'Address',
          properties: { 'zip-code': { type: 'string' }, class: { type: 'string' } },
          required: ['zip-code'],
        },
        Person: {
          type: 'object',
          title: 'Person',
          description: 'A person. Ends */ early?',
          properties: {
            name: { type: 'string', description: 'Their name.' },
            addresses: { type: 'array', items: { $ref: '#/$defs/Address' } },
            best_friend: { anyOf: [{ $ref: '#/$defs/Person' }, { type: 'null' }] },
          },
          required: ['name'],
        },
      },
      $ref: '#/$defs/Person',
    };
    assert.equal(types.type(person, 'Greet'), 'Person');
    assert.deepEqual(
      types.models.map((m) => m.name),
      ['Person', 'Address'],
    );
    assert.equal(
      renderModels(types.models).join('\n'),
      [
        '/** A person. Ends *\\/ early? */',
        'export interface Person {',
        '  /** Their name. */',
        '  name: string;',
        '  addresses?: Address[];',
        '  best_friend?: Person | null;',
        '}',
        '',
        'export interface Address {',
        '  "zip-code": string;',
        '  class?: string;',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('keeps a recursive alias that is no interface from looping: unknown where it recurs', () => {
    const json = {
      $defs: { Json: { anyOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#/$defs/Json' } }] } },
      $ref: '#/$defs/Json',
    };
    assert.equal(map(json), 'string | unknown[]');
  });

  it('splits unions at the top level only', () => {
    assert.deepEqual(unionMembers('Record<string, number | null> | [a | b] | "x | y" | null'), [
      'Record<string, number | null>',
      '[a | b]',
      '"x | y"',
      'null',
    ]);
  });
});

describe('svc:export-typescript names', () => {
  it('makes camelCase identifiers, never reserved words, never starting with a digit', () => {
    assert.deepEqual(
      ['realtime-chat', 'list_todos', 'class', 'delete', '3d', '', 'eval', 'ok'].map((n) => camelName(n, 'w')),
      ['realtimeChat', 'listTodos', 'class_', 'delete_', 'w3d', 'w', 'eval_', 'ok'],
    );
  });

  it('makes PascalCase type names', () => {
    assert.deepEqual(['greeting', 'page[Item]', '3d', '', 'zip-code'].map(typeName), ['Greeting', 'PageItem', 'T3d', 'Model', 'ZipCode']);
  });

  it('quotes keys that are no identifiers and escapes strings and JSDoc', () => {
    assert.equal(propertyKey('class'), 'class');
    assert.equal(propertyKey('first name'), '"first name"');
    assert.equal(propertyKey('"); import os; ("'), '"\\"); import os; (\\""');
    assert.equal(tsString('a\nb\u2028'), '"a\\nb\u2028"');
    assert.deepEqual(jsDoc('One */ two\n\nthree\u0000', '  '), ['  /**', '   * One *\\/ two', '   *', '   * three', '   */']);
    assert.deepEqual(jsDoc(null), []);
  });
});
