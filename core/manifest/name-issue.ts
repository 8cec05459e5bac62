import { nameRule } from '../workload/rules.js';

/**
 * The issue message for an app or workload name that breaks svc's name rule
 * (`nameProblem` of core/workspaces/names.ts): the name, what is wrong (with a
 * suggestion when there is one) and the rule, e.g.
 * `"say_hello" has the character "_" at position 4; only a-z, 0-9 and "-" are allowed; try "say-hello" (a name is a lowercase DNS label: …)`.
 */
export function nameIssue(name: string, problem: string): string {
  return `${JSON.stringify(name)} ${problem} (a name is ${nameRule})`;
}
