/** Checks a function's `schedule` option: null, `{cron, timezone, overlap}` or `{every, overlap}` (docs/manifest.md). */
import type { IssueCollector } from '../workload/issues.js';
import { cronProblem, PERIOD_RANGE, timezoneProblem } from '../workload/schedule.js';
import { checkBoolean, checkKeys, checkNumberInRange, checkObject, checkString } from './shape-checks.js';

export function checkSchedule(value: unknown, issues: IssueCollector): void {
  if (value === null) return;
  if (!checkObject(value, issues)) return;
  if (Object.hasOwn(value, 'every')) {
    checkKeys(value, ['every', 'overlap'], issues);
    checkNumberInRange(value.every, issues.at('every'), { ...PERIOD_RANGE, integer: true });
  } else {
    checkKeys(value, ['cron', 'timezone', 'overlap'], issues);
    if (Object.hasOwn(value, 'cron') && checkString(value.cron, issues.at('cron'))) {
      const problem = cronProblem(value.cron);
      if (problem !== null) issues.at('cron').add(problem);
    }
    if (Object.hasOwn(value, 'timezone') && checkString(value.timezone, issues.at('timezone'))) {
      const problem = timezoneProblem(value.timezone);
      if (problem !== null) issues.at('timezone').add(problem);
    }
  }
  if (Object.hasOwn(value, 'overlap')) checkBoolean(value.overlap, issues.at('overlap'));
}
