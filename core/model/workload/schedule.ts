/**
 * Schedules of deployed functions: the checks of a cron expression and a time
 * zone, and the next tick after a moment. Cron expressions are parsed by
 * cron-parser (docs/architecture.md); svc only counts the fields, to name the
 * one that is wrong. The manifest validator and the leader's scheduler both use these.
 */
import { CronExpressionParser } from 'cron-parser';
import type { ScheduleSpec } from './types.js';

/** The five fields of a cron expression, as docs/manifest.md names them. */
export const CRON_FIELDS = Object.freeze(['minute', 'hour', 'day of month', 'month', 'day of week'] as const);

/** A period runs at least every second and at most every 366 days. */
export const PERIOD_RANGE = Object.freeze({ min: 1, max: 366 * 86_400 });

/** What is wrong with a cron expression (naming the field), or null when cron-parser accepts it. */
export function cronProblem(expression: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== CRON_FIELDS.length || expression.trim() === '') {
    return `must have 5 fields (${CRON_FIELDS.join(', ')}), like "0 3 * * *", got ${fields.filter((f) => f !== '').length} in ${JSON.stringify(expression)}`;
  }
  // Each field alone, the others `*`, so that the problem names its field.
  for (const [index, field] of fields.entries()) {
    const problem = secondsCronProblem(`0 ${CRON_FIELDS.map((_, i) => (i === index ? field : '*')).join(' ')}`);
    if (problem !== null) return `field ${index + 1} (${CRON_FIELDS[index]}) ${JSON.stringify(field)} is not valid: ${problem}`;
  }
  // Fields valid one by one can still never meet (day 31 of February).
  const never = secondsCronProblem(`0 ${expression.trim()}`);
  return never === null ? null : `${JSON.stringify(expression)} never matches a time: ${never}`;
}

/** Why cron-parser refuses six fields (a second first), or null: what the job validator checks Nomad's specs with. */
export function secondsCronProblem(sixFields: string): string | null {
  try {
    CronExpressionParser.parse(sixFields).next();
    return null;
  } catch (error) {
    return messageOf(error);
  }
}

/** What is wrong with a time zone name, or null when it is an IANA zone this Node knows. */
export function timezoneProblem(timezone: string): string | null {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return null;
  } catch {
    return `must be an IANA time zone name like "UTC" or "Europe/Paris", got ${JSON.stringify(timezone)}`;
  }
}

/**
 * The first tick strictly after `after`. A period ticks on the multiples of
 * its length since the Unix epoch, so that every replica computes the same ticks.
 */
export function nextTick(schedule: ScheduleSpec, after: Date): Date {
  if ('every' in schedule) {
    const periodMs = schedule.every * 1000;
    return new Date((Math.floor(after.getTime() / periodMs) + 1) * periodMs);
  }
  const expression = CronExpressionParser.parse(`0 ${schedule.cron.trim()}`, { currentDate: after, tz: schedule.timezone });
  return expression.next().toDate();
}

/** How a schedule reads in the CLI and on the dashboard: `cron 0 3 * * * (UTC)`, `every 300s`. */
export function describeSchedule(schedule: ScheduleSpec): string {
  const overlap = schedule.overlap ? ', overlapping runs allowed' : '';
  return 'every' in schedule ? `every ${schedule.every}s${overlap}` : `cron ${schedule.cron} (${schedule.timezone})${overlap}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
