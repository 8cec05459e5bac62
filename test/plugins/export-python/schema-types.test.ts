import assert from 'node:assert/strict';
import { renderModels } from '../../../plugins/export-python/models.js';
import { className, identifier, NameScope, pyDocstring, pyLiteral } from '../../../plugins/export-python/names.js';
import { TypeMapper, unionMembers } from '../../../plugins/export-python/schema-types.js';

const mapper = () => new TypeMapper(new NameScope(['greet']));
const map = (schema: unknown) => mapper().type(schema, 'Greet');

describe('TypeMapper#type(): JSON Schema → Python annotation', () => {
  const table: [string, unknown, string][] = [
    ['{} (no annotation, Any)', {}, 'typing.Any'],
    ['str', { type: 'string' }, 'str'],
    ['int', { type: 'integer' }, 'int'],
    ['float', { type: 'number' }, 'float'],
    ['bool', { type: 'boolean' }, 'bool'],
    ['None', { type: 'null' }, 'None'],
    ['bytes in JSON (base64)', { type: 'string', contentEncoding: 'base64' }, 'bytes'],
    ['list[T]', { type: 'array', items: { type: 'integer' } }, 'list[int]'],
    ['bare list', { type: 'array' }, 'list[typing.Any]'],
    ['tuple[A, B]', { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string' }], minItems: 2, maxItems: 2 }, 'tuple[int, str]'],
    ['dict[str, T]', { type: 'object', additionalProperties: { type: 'number' } }, 'dict[str, float]'],
    ['bare dict', { type: 'object' }, 'dict[str, typing.Any]'],
    ['Optional[T]', { anyOf: [{ type: 'string' }, { type: 'null' }] }, 'str | None'],
    ['Union[A, B] with None first', { anyOf: [{ type: 'null' }, { type: 'integer' }, { type: 'string' }] }, 'int | str | None'],
    ['a union holding Any is Any', { anyOf: [{}, { type: 'integer' }] }, 'typing.Any'],
    ['Literal', { enum: ['a', 'b'] }, 'typing.Literal["a", "b"]'],
    ['Enum (title and values)', { title: 'Color', enum: ['red', 1, true] }, 'typing.Literal["red", 1, True]'],
    ['Literal with None', { enum: ['a', null] }, 'typing.Literal["a"] | None'],
    ['const', { const: 'x' }, 'typing.Literal["x"]'],
    ['float enum values cannot be a Literal', { enum: [1.5] }, 'typing.Any'],
    ['a list of type names', { type: ['integer', 'null'] }, 'int | None'],
    ['an unresolved name', { title: 'SomethingElse' }, 'typing.Any'],
    ['a $ref to nowhere', { $ref: '#/$defs/Missing' }, 'typing.Any'],
    [
      'nested unions keep inner None',
      { anyOf: [{ type: 'object', additionalProperties: { anyOf: [{ type: 'integer' }, { type: 'null' }] } }, { type: 'null' }] },
      'dict[str, int | None] | None',
    ],
  ];
  for (const [what, schema, expected] of table) {
    it(`maps ${what} to ${expected}`, () => assert.equal(map(schema), expected));
  }

  it('makes a dataclass of an object schema with properties, named by its title, once for equal schemas', () => {
    const types = mapper();
    const greeting = {
      type: 'object',
      title: 'Greeting',
      properties: { message: { type: 'string' }, length: { type: 'integer' } },
      required: ['message', 'length'],
    };
    assert.equal(types.type(greeting, 'Greet'), 'Greeting');
    assert.equal(types.type({ type: 'array', items: greeting }, 'Other'), 'list[Greeting]');
    assert.deepEqual(
      types.models.map((m) => [m.name, m.fields.map((f) => [f.name, f.type, f.default])]),
      [
        [
          'Greeting',
          [
            ['message', 'str', null],
            ['length', 'int', null],
          ],
        ],
      ],
    );
  });

  it('names an untitled object from its place, and a second class of the same title apart', () => {
    const types = mapper();
    assert.equal(types.type({ type: 'object', properties: { a: { type: 'integer' } } }, 'GreetResult'), 'GreetResult');
    assert.equal(types.type({ type: 'object', title: 'GreetResult', properties: { b: { type: 'string' } } }, 'X'), 'GreetResult_2');
    assert.equal(types.type({ type: 'object', title: 'greet', properties: {} }, 'X'), 'Greet', 'title greet becomes the class Greet');
  });

  it('follows $defs/$ref (pydantic), nested models and recursion, with defaults, aliases and optional fields', () => {
    const types = mapper();
    const person = {
      $defs: {
        Address: {
          type: 'object',
          title: 'Address',
          properties: { street: { type: 'string' }, 'zip-code': { type: 'string' } },
          required: ['street', 'zip-code'],
        },
        Person: {
          type: 'object',
          title: 'Person',
          description: 'A person.',
          properties: {
            name: { type: 'string' },
            addresses: { type: 'array', items: { $ref: '#/$defs/Address' }, default: [] },
            best_friend: { anyOf: [{ $ref: '#/$defs/Person' }, { type: 'null' }], default: null },
            nickname: { type: 'string' },
          },
          required: ['name'],
        },
      },
      $ref: '#/$defs/Person',
    };
    assert.equal(types.type(person, 'Greet'), 'Person');
    const byName = Object.fromEntries(types.models.map((m) => [m.name, m]));
    assert.deepEqual(Object.keys(byName), ['Person', 'Address']);
    assert.equal(byName.Person!.doc, 'A person.');
    assert.deepEqual(
      byName.Person!.fields.map((f) => [f.name, f.type, f.default, f.omitWhenNone]),
      [
        ['name', 'str', null, false],
        ['addresses', 'list[Address]', { literal: '[]', factory: true }, false],
        ['best_friend', 'Person | None', { literal: 'None', factory: false }, false],
        ['nickname', 'str | None', { literal: 'None', factory: false }, true],
      ],
    );
    assert.deepEqual(
      byName.Address!.fields.map((f) => [f.name, f.key]),
      [
        ['street', 'street'],
        ['zip_code', 'zip-code'],
      ],
    );
  });

  it('resolves the SDK\'s recursion marker {"title": X} to the class being built', () => {
    const types = mapper();
    const node = {
      type: 'object',
      title: 'Node',
      properties: { children: { type: 'array', items: { title: 'Node' } } },
      required: ['children'],
    };
    assert.equal(types.type(node, 'Greet'), 'Node');
    assert.equal(types.models[0]!.fields[0]!.type, 'list[Node]');
  });

  it('makes a dataclass keyword-only when a required field follows a defaulted one (kw_only dataclasses)', () => {
    const types = mapper();
    types.type(
      {
        type: 'object',
        title: 'Typing',
        properties: { type: { enum: ['typing'], default: 'typing' }, to: { type: 'string' } },
        required: ['to'],
      },
      'X',
    );
    assert.equal(types.models[0]!.kwOnly, true);
    const text = renderModels(types.models, '# header\n', 'demo');
    assert.match(text, /@_dc\.dataclass\(kw_only=True\)\nclass Typing:\n {4}type: typing\.Literal\["typing"\] = "typing"\n {4}to: str\n/);
  });

  it('renames fields that would break the class or hide a type, keeping their JSON key', () => {
    const types = mapper();
    types.type(
      {
        type: 'object',
        title: 'Odd',
        properties: {
          self: { type: 'integer' },
          class: { type: 'integer' },
          str: { type: 'string' },
          '2x': { type: 'integer' },
          Odd: { type: 'integer' },
        },
        required: ['self', 'class', 'str', '2x', 'Odd'],
      },
      'X',
    );
    const text = renderModels(types.models, '# header\n', 'demo');
    assert.match(text, / {4}self_: int = _dc\.field\(metadata=\{"json": "self"\}\)\n/);
    assert.match(text, / {4}class_: int = _dc\.field\(metadata=\{"json": "class"\}\)\n/);
    assert.match(text, / {4}str_: str = _dc\.field\(metadata=\{"json": "str"\}\)\n/);
    assert.match(text, / {4}f_2x: int = _dc\.field\(metadata=\{"json": "2x"\}\)\n/);
    assert.match(text, / {4}Odd_: int = _dc\.field\(metadata=\{"json": "Odd"\}\)\n/);
  });
});

describe('Python names and literals', () => {
  it('identifier() makes identifiers of DNS labels, digits and keywords', () => {
    assert.deepEqual(
      ['realtime-chat', '3d', 'class', 'greet', 'a b', ''].map((name) => identifier(name, 'app_')),
      ['realtime_chat', 'app_3d', 'class_', 'greet', 'a_b', 'app'],
    );
    assert.deepEqual(['greeting', 'chat-message', 'page[Item]', '3d'].map(className), ['Greeting', 'ChatMessage', 'PageItem', 'M3d']);
  });

  it('NameScope hands out each name once', () => {
    const scope = new NameScope(['str']);
    assert.deepEqual([scope.take('a'), scope.take('a'), scope.take('str')], ['a', 'a_2', 'str_2']);
  });

  it('pyLiteral() writes JSON values as Python', () => {
    assert.equal(pyLiteral({ a: [1, 2.5, true, null, 'x"y\n'] }), '{"a": [1, 2.5, True, None, "x\\"y\\n"]}');
  });

  it('pyDocstring() cannot be ended early by the text', () => {
    assert.equal(pyDocstring('a """ b \\', ''), '"""a \\"\\"\\" b \\\\"""');
    assert.equal(pyDocstring('one\n\ntwo\u0000', '    '), '    """one\n\n    two\\u0000\n    """');
  });

  it('unionMembers() splits at the top level only, outside strings', () => {
    assert.deepEqual(unionMembers('dict[str, int | None] | typing.Literal[" | "] | None'), [
      'dict[str, int | None]',
      'typing.Literal[" | "]',
      'None',
    ]);
  });
});
