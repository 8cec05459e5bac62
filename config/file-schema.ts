/**
 * The config file's JSON Schema, made from the one list of keys (`configKeys`):
 * a JSON object of known keys. What each value may be is value-rules.ts's rule per kind,
 * since the same rules read the SVC_* variables and flags, which are strings; and
 * a token in the file is refused in load.ts, since it counts only when no variable overrides it.
 */
import { compile } from '../core/model/schema/ajv.js';
import { issuesOf } from '../core/model/schema/issues.js';
import { configKeys } from './schema.js';

const known = Object.keys(configKeys);
const objectMessage = 'must hold a JSON object';

const validateFile = compile({
  type: 'object',
  propertyNames: { enum: known, 'x-svc-messages': { enum: `unknown key {json} (known: ${known.join(', ')})` } },
  'x-svc-messages': { type: objectMessage },
});

/** What is wrong with a config file's JSON as a whole: not an object (`object: false`), unknown keys. */
export function configFileProblems(value: unknown): { readonly object: boolean; readonly problems: readonly string[] } {
  const messages = validateFile(value) ? [] : issuesOf(value, validateFile.errors).map((issue) => issue.message);
  return { object: !messages.includes(objectMessage), problems: messages };
}
