/** Checks a workload's `secrets`: a list of distinct secret names (svc's naming rule) and `@<i>` inline references, never values. */
import type { IssueCollector } from '../workload/issues.js';
import { INLINE_SECRET_REF, MAX_WORKLOAD_SECRETS, nameProblem } from '../workload/rules.js';
import { checkArray, checkString } from './shape-checks.js';

export function validateSecretNames(value: unknown, issues: IssueCollector): void {
  if (!checkArray(value, issues)) return;
  if (value.length > MAX_WORKLOAD_SECRETS) issues.add(`lists ${value.length} secrets; a workload takes at most ${MAX_WORKLOAD_SECRETS}`);
  const seen = new Map<string, number>();
  value.forEach((name, index) => {
    const at = issues.at(index);
    if (!checkString(name, at)) return;
    const problem = INLINE_SECRET_REF.test(name) ? null : nameProblem(name, 'secret');
    if (problem !== null) at.add(`the secret name ${JSON.stringify(name)} ${problem}`);
    const first = seen.get(name);
    if (first !== undefined) at.add(`duplicate secret ${JSON.stringify(name)} (also secrets[${first}])`);
    else seen.set(name, index);
  });
}
