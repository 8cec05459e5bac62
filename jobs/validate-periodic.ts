/**
 * The `Periodic` block of a batch job, as Nomad's server checks it
 * (structs.PeriodicConfig.Validate): with `Enabled`, exactly one of `Spec`
 * and `Specs`, `SpecType` "cron", every spec a cron expression Nomad's
 * cronexpr reads (5 fields; 6 with a year; 7 with seconds first and a year;
 * or a macro like `@daily`), and a time zone Go's LoadLocation knows. The
 * fields are parsed with cron-parser, through core/model/workload/schedule.ts.
 */
import { secondsCronProblem, timezoneProblem } from '../core/model/workload/schedule.js';
import { obj, oneOf, str, type Obj, type Report } from './rules.js';

const MACROS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];
const YEAR = /^[0-9*,/-]+$/;

export function checkPeriodic(report: Report, value: unknown, jobType: string): void {
  const periodic = obj(value);
  if (periodic === undefined) return;
  if (jobType !== 'batch' && jobType !== 'sysbatch') report('Job.Periodic', 'is only allowed on batch and sysbatch jobs');
  if (periodic.Enabled === false) return;
  checkSpecs(report, periodic);
  oneOf(report, 'Job.Periodic.SpecType', periodic.SpecType, ['cron']);
  const zone = str(periodic.TimeZone);
  if (zone !== undefined && zone !== '' && timezoneProblem(zone) !== null)
    report('Job.Periodic.TimeZone', `"${zone}" is not a time zone Nomad can load (an IANA name like "UTC" or "Europe/Paris")`);
}

function checkSpecs(report: Report, periodic: Obj): void {
  const spec = str(periodic.Spec) ?? '';
  const specs = Array.isArray(periodic.Specs) ? (periodic.Specs as unknown[]) : [];
  if (spec !== '' && specs.length > 0)
    return void report('Job.Periodic', 'sets both Spec and Specs (Nomad: "Only cron or crons may be used")');
  if (spec === '' && specs.length === 0)
    return void report('Job.Periodic.Spec', 'is required when the job is periodic (Nomad: "Must specify a spec")');
  const all =
    spec !== ''
      ? [['Job.Periodic.Spec', spec] as const]
      : specs.map((s, i) => [`Job.Periodic.Specs[${i}]`, typeof s === 'string' ? s : ''] as const);
  for (const [path, text] of all) {
    const problem = nomadCronProblem(text);
    if (problem !== null) report(path, `"${text}" is not a cron spec Nomad reads: ${problem}`);
  }
}

/** Why Nomad's cron would refuse `spec`, or null. */
export function nomadCronProblem(spec: string): string | null {
  const trimmed = spec.trim();
  if (trimmed.startsWith('@')) return MACROS.includes(trimmed) ? null : `unknown macro (use one of ${MACROS.join(', ')})`;
  const fields = trimmed.split(/\s+/);
  let secondsFirst: string[];
  if (fields.length === 5) secondsFirst = ['0', ...fields];
  else if (fields.length === 6) secondsFirst = ['0', ...fields.slice(0, 5)];
  else if (fields.length === 7) secondsFirst = fields.slice(0, 6);
  else return `it has ${fields.length} fields; Nomad reads 5 (minute to day of week), 6 (and a year) or 7 (a second first, and a year)`;
  const year = fields.length > 5 ? fields.at(-1)! : '*';
  if (!YEAR.test(year)) return `the year field "${year}" is not valid`;
  return secondsCronProblem(secondsFirst.join(' '));
}
