/**
 * The one naming rule of svc: a name (of a workspace; apps and workloads are
 * meant to follow it too) is a lowercase DNS label, so that it can appear in
 * a host name and a URL path unchanged and means the same everywhere.
 */
import { SvcError } from '../errors.js';

export const NAME_MAX_LENGTH = 63;

/** The rule in words, for messages and docs. */
export const NAME_RULE = 'a lowercase DNS label: 1 to 63 characters from a-z, 0-9 and "-", not starting or ending with "-"';

/** Why `name` breaks the rule, or null when it follows it. */
export function nameProblem(name: unknown): string | null {
  if (typeof name !== 'string') return `must be a string, not ${name === null ? 'null' : typeof name}`;
  if (name.length === 0) return 'must not be empty';
  if (name.length > NAME_MAX_LENGTH) return `is ${name.length} characters long; at most ${NAME_MAX_LENGTH} are allowed`;
  const bad = /[^a-z0-9-]/.exec(name);
  if (bad !== null) {
    const char = bad[0];
    if (/[A-Z]/.test(char)) return `has the upper-case letter "${char}"; names are lower case (try ${JSON.stringify(name.toLowerCase())})`;
    return `has the character ${JSON.stringify(char)} at position ${bad.index + 1}; only a-z, 0-9 and "-" are allowed`;
  }
  if (name.startsWith('-')) return 'must not start with "-"';
  if (name.endsWith('-')) return 'must not end with "-"';
  return null;
}

/** Returns `name` when it follows the rule; throws `name_invalid` saying what is wrong otherwise. `kind` names what is named ("workspace"). */
export function checkName(kind: string, name: unknown): string {
  const problem = nameProblem(name);
  if (problem === null) return name as string;
  const shown = typeof name === 'string' ? ` ${JSON.stringify(name)}` : '';
  throw new SvcError('name_invalid', `the ${kind} name${shown} ${problem}`, {
    hint: `A ${kind} name is ${NAME_RULE}, e.g. "acme-prod".`,
    details: { kind, name: typeof name === 'string' ? name : null },
  });
}
