/**
 * The one naming rule of svc: a name of a workspace, an app or a workload is a
 * lowercase DNS label, so that it can appear in a host name and a URL path
 * unchanged and means the same everywhere. The API checks names with
 * `checkName`, the manifest validator with `nameProblem`; the Python SDK
 * (sdk/python/svc/_checks.py) has the same rule, kept equal by
 * test/core/model/workload/sdk-parity.test.ts.
 */
import { SvcError } from './errors.js';

export const NAME_MAX_LENGTH = 63;

/** The rule in words, for messages and docs. */
export const NAME_RULE = 'a lowercase DNS label: 1 to 63 characters from a-z, 0-9 and "-", not starting or ending with "-", without "--"';

/**
 * Workspace names that platform URLs use as their first path segment
 * (`/api/v1/…`, `/device`, `/login`, the dashboard's pages): path-based
 * workload URLs start with the workspace (`/<workspace>/<app>/<workload>`),
 * so a workspace with one of these names would shadow them or be shadowed.
 * `preview` is reserved because host-based URLs mark previews with `--preview`.
 */
export const RESERVED_WORKSPACE_NAMES: readonly string[] = ['api', 'assets', 'dashboard', 'device', 'login', 'logout', 'preview', 'static'];

/**
 * The rule as a JSON Schema `pattern`, for the API's declarations of names
 * in paths (docs/openapi.json); `nameProblem` says in words why a name breaks
 * it, and a test keeps the two equal.
 */
export const NAME_PATTERN = `^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,${NAME_MAX_LENGTH - 2}}[a-z0-9])?$`;

/** A workspace name's pattern: the rule, and none of the reserved names. */
export const WORKSPACE_NAME_PATTERN = `^(?!(?:${RESERVED_WORKSPACE_NAMES.join('|')})$)${NAME_PATTERN.slice(1)}`;

/**
 * The name `text` most likely means, made by the one derivation svc uses
 * (the Python SDK names a workload after its function this way: `say_hello` →
 * `say-hello`): lower case, every "_" turned into "-", runs of "-" collapsed
 * to one, "-" stripped from both ends. The result may still break the rule
 * (other characters, too long, empty): check it with `nameProblem`.
 * sdk/python/svc/_checks.py `derive_name` is the same function; the parity
 * test (test/core/model/workload/sdk-parity.test.ts) checks that they agree.
 */
export function suggestName(text: string): string {
  return text
    .toLowerCase()
    .replaceAll('_', '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * Why `name` breaks the rule, or null when it follows it. Workspace names
 * (`kind` "workspace", the default) must also not be one of the reserved words.
 * When `suggestName` turns a broken name into a valid one, the reason ends
 * with it: `…; try "say-hello"`.
 */
export function nameProblem(name: unknown, kind = 'workspace'): string | null {
  const problem = ruleProblem(name, kind);
  if (problem === null || typeof name !== 'string') return problem;
  const suggestion = suggestName(name);
  return suggestion !== name && ruleProblem(suggestion, kind) === null ? `${problem}; try ${JSON.stringify(suggestion)}` : problem;
}

function ruleProblem(name: unknown, kind: string): string | null {
  if (typeof name !== 'string') return `must be a string, not ${name === null ? 'null' : typeof name}`;
  if (name.length === 0) return 'must not be empty';
  if (name.length > NAME_MAX_LENGTH) return `is ${name.length} characters long; at most ${NAME_MAX_LENGTH} are allowed`;
  const bad = /[^a-z0-9-]/.exec(name);
  if (bad !== null) {
    const char = bad[0];
    if (/[A-Z]/.test(char)) return `has the upper-case letter "${char}"; names are lower case`;
    return `has the character ${JSON.stringify(char)} at position ${bad.index + 1}; only a-z, 0-9 and "-" are allowed`;
  }
  if (name.startsWith('-')) return 'must not start with "-"';
  if (name.endsWith('-')) return 'must not end with "-"';
  // URLs use "--" as their own separator (`<app>--preview`, `<app>-<workload>--<workspace>`).
  if (name.includes('--')) return 'must not contain "--": svc uses it in URLs to mark previews and workspaces';
  if (kind === 'workspace' && RESERVED_WORKSPACE_NAMES.includes(name)) {
    return `is reserved: svc's own pages and API share the URL space with workspace paths (reserved: ${RESERVED_WORKSPACE_NAMES.join(', ')})`;
  }
  return null;
}

/** Returns `name` when it follows the rule; throws `name_invalid` saying what is wrong otherwise. `kind` names what is named ("workspace"). */
export function checkName(kind: string, name: unknown): string {
  const problem = nameProblem(name, kind);
  if (problem === null) return name as string;
  throw nameInvalid(kind, name, problem);
}

/** The `name_invalid` of a `kind` name that breaks the rule; `problem` says how (`nameProblem`). */
export function nameInvalid(kind: string, name: unknown, problem: string): SvcError {
  const shown = typeof name === 'string' ? ` ${JSON.stringify(name)}` : '';
  return new SvcError('name_invalid', `the ${kind} name${shown} ${problem}`, {
    hint: `A ${kind} name is ${NAME_RULE}, e.g. "acme-prod".`,
    details: { kind, name: typeof name === 'string' ? name : null },
  });
}
