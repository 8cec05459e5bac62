/**
 * TypeScript names, literals and comments from manifest text. Everything in
 * an app interface comes from someone's manifest (and an ASGI app's OpenAPI
 * document), so nothing reaches the generated source unescaped: names become
 * identifiers (never reserved words, never clashing), strings JSON literals,
 * docs JSDoc blocks that `*\/` cannot end early.
 */
import { NameScope as SharedNameScope } from 'svc/plugin';

/** Reserved words of JavaScript (strict mode, modules) and TypeScript's own type names: no binding may take them. */
const RESERVED = new Set([
  'arguments',
  'await',
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'eval',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'implements',
  'import',
  'in',
  'instanceof',
  'interface',
  'let',
  'new',
  'null',
  'package',
  'private',
  'protected',
  'public',
  'return',
  'static',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  'yield',
  'any',
  'bigint',
  'boolean',
  'never',
  'number',
  'object',
  'string',
  'symbol',
  'undefined',
  'unknown',
  'NaN',
  'Infinity',
]);

/** Globals the generated declarations use: a generated type of the same name would hide them. */
export const GLOBAL_TYPES = [
  'Array',
  'ArrayBuffer',
  'AsyncIterable',
  'AsyncIterator',
  'Boolean',
  'Date',
  'Error',
  'Function',
  'JSON',
  'Map',
  'Number',
  'Object',
  'Partial',
  'Promise',
  'Readonly',
  'ReadonlyArray',
  'Record',
  'Set',
  'String',
  'Symbol',
  'TypeError',
  'Uint8Array',
];

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function isIdentifier(text: string): boolean {
  return IDENTIFIER.test(text) && !RESERVED.has(text);
}

/**
 * A camelCase identifier made from `text` (`realtime-chat` → `realtimeChat`,
 * `list_todos` → `listTodos`): a leading digit gets `prefix`, a reserved word
 * a trailing `_` (`class` → `class_`).
 */
export function camelName(text: string, prefix = 'n'): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  let name = words.map((word, i) => (i === 0 ? word[0]!.toLowerCase() + word.slice(1) : word[0]!.toUpperCase() + word.slice(1))).join('');
  if (name === '') name = prefix;
  if (/^[0-9]/.test(name)) name = `${prefix}${name}`;
  return RESERVED.has(name) ? `${name}_` : name;
}

/** A PascalCase type name (`Greeting`, `page[Item]` → `PageItem`, `3d` → `T3d`). */
export function typeName(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  const joined = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
  if (joined === '') return 'Model';
  return /^[0-9]/.test(joined) ? `T${joined}` : joined;
}

/** Hands out unique names: a taken one gets `2`, `3`… (camelCase has no `_`). */
export class NameScope extends SharedNameScope {
  constructor(reserved: Iterable<string> = []) {
    super(reserved, '');
  }
}

/** A JS/TS string literal: JSON's escapes are all valid (U+2028/2029 too, since ES2019). */
export function tsString(text: string): string {
  return JSON.stringify(text);
}

/** A property key: bare when it is an identifier (reserved words are fine as keys), else quoted. */
export function propertyKey(key: string): string {
  return IDENTIFIER.test(key) ? key : tsString(key);
}

/** A JSDoc block, indented; `*\/` in the text cannot end it, control characters become spaces. */
export function jsDoc(text: string | null, indent = ''): string[] {
  if (text === null || text.trim() === '') return [];
  const lines = text
    .replace(/\r\n?/g, '\n')
    .replace(/\*\//g, '*\\/')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f\u2028\u2029]/g, ' ')
    .split('\n')
    .map((line) => line.trimEnd());
  if (lines.length === 1) return [`${indent}/** ${lines[0]} */`];
  return [`${indent}/**`, ...lines.map((line) => (line === '' ? `${indent} *` : `${indent} * ${line}`)), `${indent} */`];
}

/** Text for a `//` comment line: one line, printable. */
export function commentText(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
}
