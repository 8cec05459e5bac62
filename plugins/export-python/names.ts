/**
 * Python names and literals from manifest text. Everything in an app
 * interface comes from someone's manifest, so nothing reaches the generated
 * source unescaped: names become identifiers (never keywords, never
 * clashing), strings become JSON-escaped literals, docstrings cannot end early.
 */

const KEYWORDS = new Set([
  'False',
  'None',
  'True',
  'and',
  'as',
  'assert',
  'async',
  'await',
  'break',
  'class',
  'continue',
  'def',
  'del',
  'elif',
  'else',
  'except',
  'finally',
  'for',
  'from',
  'global',
  'if',
  'import',
  'in',
  'is',
  'lambda',
  'nonlocal',
  'not',
  'or',
  'pass',
  'raise',
  'return',
  'try',
  'while',
  'with',
  'yield',
]);

/** Names a generated class must not take: the builtins its annotations use. */
export const BUILTIN_TYPES = ['str', 'int', 'float', 'bool', 'bytes', 'list', 'dict', 'tuple', 'object', 'type', 'typing'];

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * An ASCII identifier made from `text`: other characters become `_`, a
 * leading digit gets `prefix`, a keyword gets a trailing `_`
 * (`realtime-chat` → `realtime_chat`, `3d` → `n_3d`, `class` → `class_`).
 */
export function identifier(text: string, prefix = 'n_'): string {
  let name = text.replace(/[^A-Za-z0-9_]/g, '_');
  if (name === '') name = prefix.replace(/_+$/, '') || 'n';
  if (/^[0-9]/.test(name)) name = `${prefix}${name}`;
  if (KEYWORDS.has(name)) name = `${name}_`;
  return name;
}

export function isIdentifier(text: string): boolean {
  return IDENTIFIER.test(text) && !KEYWORDS.has(text);
}

/** `Greeting`, `ChatMessage`, from a schema title or a hint (`page[Item]` → `PageItem`). */
export function className(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  const joined = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
  return identifier(joined === '' ? 'Model' : joined, 'M');
}

/** Hands out unique names: a taken one gets `_2`, `_3`… */
export { NameScope } from 'svc/plugin';

/** A Python string literal: JSON's escapes are all valid in Python. */
export function pyString(text: string): string {
  return JSON.stringify(text);
}

/** A Python literal of a JSON value: `True`, `None`, `"a"`, `[1, 2]`, `{"k": 1.5}`. */
export function pyLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return pyString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'None';
  if (Array.isArray(value)) return `[${value.map(pyLiteral).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([key, item]) => `${pyString(key)}: ${pyLiteral(item)}`)
      .join(', ')}}`;
  }
  return 'None';
}

/**
 * A triple-quoted docstring body, indented: backslashes and quotes escaped
 * (so `"""` in the text cannot end it), control characters but tab and
 * newline written as escapes, trailing spaces trimmed.
 */
export function pyDocstring(text: string, indent: string): string {
  const escaped = text
    .replace(/\r\n?/g, '\n')
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const lines = escaped.split('\n').map((line) => line.trimEnd());
  const body = lines.map((line, index) => (index === 0 || line === '' ? line : `${indent}${line}`)).join('\n');
  return lines.length === 1 ? `${indent}"""${body}"""` : `${indent}"""${body}\n${indent}"""`;
}

/** Text for a `#` comment line: one line, printable. */
export function commentText(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ');
}
