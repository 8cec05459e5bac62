/**
 * `validateJob(body)`: the strict validator every job svc submits passes.
 * Nomad decodes job JSON leniently (unknown keys dropped, keys matched
 * case-insensitively) and checks the rest only on the server, so this
 * refuses unknown keys at every level, wrong types and string durations
 * (validate-shape.ts), and applies the rules Nomad's server checks
 * (structs.Job.Validate and its callees): memory ≥ 10 MB, an ephemeral disk above the log allowance,
 * RFC 1123 service names, port labels that exist, `Scaling.Max`… Each issue
 * names its JSON path (`Job.TaskGroups[0].Tasks[0].Resources.MemoryMB`).
 */
import { registrationShape, serverOnlyJobKeys } from './schema.js';
import {
  checkConsulMeta,
  checkPlacement,
  checkUpdate,
  list,
  num,
  obj,
  oneOf,
  reporter,
  SECOND_NS,
  showDuration,
  str,
  type Obj,
  type Report,
} from './rules.js';
import { checkPeriodic } from './validate-periodic.js';
import { checkServices } from './validate-services.js';
import { checkShape } from './validate-shape.js';
import { checkTask } from './validate-task.js';
import { DNS_LABEL } from './names.js';
import type { JobIssue } from './types.js';

/** One `  <path>: <message>` line per issue. */
export function formatIssues(issues: readonly JobIssue[]): string {
  return issues.map((issue) => `  ${issue.path || '(body)'}: ${issue.message}`).join('\n');
}

/** Every problem of a `PUT /v1/jobs` body (`{"Job": {...}}`), [] when there is none. */
export function validateJob(body: unknown): JobIssue[] {
  const issues: JobIssue[] = [];
  const report = reporter(issues);
  const envelope = obj(body);
  if (envelope === undefined) return [{ path: '', message: 'the body must be an object {"Job": {...}}' }];
  const job = obj(envelope.Job);
  // Server-only keys first, with their own message, then the whitelist walk for everything else.
  const stripped = job === undefined ? envelope : { ...envelope, Job: withoutKeys(job, serverOnlyJobKeys) };
  checkShape(stripped, registrationShape, '', issues);
  for (const issue of issues) (issue as { path: string }).path = issue.path.replace(/^\./, '');
  if (job === undefined) {
    if (envelope.Job === undefined) report('Job', 'is required (Nomad answers 400 "Job must be specified")');
    return issues;
  }
  for (const key of serverOnlyJobKeys)
    if (key in job) report(`Job.${key}`, 'is set by the Nomad server; a generated job must not carry it');
  const priority = num(envelope.EvalPriority);
  if (priority !== undefined && (priority < 1 || priority > 100)) report('EvalPriority', 'must be between 1 and 100');
  checkJob(report, job);
  return issues;
}

function withoutKeys(value: Obj, keys: readonly string[]): Obj {
  return Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));
}

function checkJob(report: Report, job: Obj): void {
  const id = str(job.ID);
  if (id === undefined || id === '') report('Job.ID', 'is required (Nomad answers 400 "Job ID hasn\'t been provided")');
  else if (/[\s\u0000]/.test(id)) report('Job.ID', 'must not contain spaces or NUL');
  else if (!DNS_LABEL.test(id))
    report(
      'Job.ID',
      `"${id}" breaks svc's ID rule: a lowercase RFC 1123 label of at most 63 characters (it is also the Consul service name)`,
    );
  const name = str(job.Name);
  if (name !== undefined && (name === '' || name.includes('\u0000'))) report('Job.Name', 'must be non-empty and without NUL');
  const type = str(job.Type) ?? 'service';
  oneOf(report, 'Job.Type', job.Type, ['service', 'batch', 'system', 'sysbatch']);
  const namespace = str(job.Namespace);
  if (namespace !== undefined && !/^[a-zA-Z0-9-]{1,128}$/.test(namespace)) report('Job.Namespace', 'must match ^[a-zA-Z0-9-]{1,128}$');
  const priority = num(job.Priority);
  if (priority !== undefined && (priority < 1 || priority > 100)) report('Job.Priority', 'must be between 1 and 100');
  if (Array.isArray(job.Datacenters)) {
    job.Datacenters.forEach((dc, index) => {
      if (dc === '') report(`Job.Datacenters[${index}]`, 'must not be empty');
    });
  }
  const batch = type === 'batch' || type === 'sysbatch';
  checkPeriodic(report, job.Periodic, type);
  if (job.ParameterizedJob !== undefined && !batch) report('Job.ParameterizedJob', 'is only allowed on batch and sysbatch jobs');
  checkUpdate(report, 'Job.Update', job.Update);
  checkReschedule(report, 'Job.Reschedule', job.Reschedule);
  checkConsulMeta(report, 'Job.Meta', job.Meta);
  const ui = obj(job.UI);
  const description = str(ui?.Description);
  if (description !== undefined && description.length > 1000)
    report('Job.UI.Description', `is ${description.length} characters long; Nomad allows 1000`);
  list(ui?.Links).forEach((link, index) => {
    if (!str(link.Label)) report(`Job.UI.Links[${index}].Label`, 'is required');
    if (!str(link.URL)) report(`Job.UI.Links[${index}].URL`, 'is required');
  });
  checkPlacement(report, 'Job', job, false);
  const groups = list(job.TaskGroups);
  if (!Array.isArray(job.TaskGroups) || job.TaskGroups.length === 0)
    report('Job.TaskGroups', 'needs at least one task group (Nomad: "Missing job task groups")');
  const names = new Set<string>();
  groups.forEach((group, index) => {
    const path = `Job.TaskGroups[${index}]`;
    const groupName = str(group.Name);
    if (groupName === undefined || groupName === '') report(`${path}.Name`, 'is required');
    else if (names.has(groupName)) report(`${path}.Name`, `group name "${groupName}" is used twice`);
    else names.add(groupName);
    checkGroup(report, path, group, type, id);
  });
}

function checkGroup(report: Report, path: string, group: Obj, jobType: string, jobId: string | undefined): void {
  const count = num(group.Count);
  if (count !== undefined && count < 0) report(`${path}.Count`, 'must be 0 or more');
  checkScaling(report, path, group, count, jobType);
  const restart = obj(group.RestartPolicy);
  if (restart !== undefined) checkRestart(report, `${path}.RestartPolicy`, restart);
  checkReschedule(report, `${path}.ReschedulePolicy`, group.ReschedulePolicy);
  checkUpdate(report, `${path}.Update`, group.Update);
  const shutdown = num(group.ShutdownDelay);
  if (shutdown !== undefined && shutdown < 0) report(`${path}.ShutdownDelay`, 'must be 0 or more');
  if (group.MaxRunDuration !== undefined && jobType !== 'batch' && jobType !== 'sysbatch')
    report(`${path}.MaxRunDuration`, 'is only allowed in batch jobs');
  const disconnect = obj(group.Disconnect);
  if (disconnect !== undefined)
    oneOf(report, `${path}.Disconnect.Reconcile`, disconnect.Reconcile, [
      'keep_original',
      'keep_replacement',
      'best_score',
      'longest_running',
    ]);
  const labels = checkNetworks(report, path, group);
  const tasks = list(group.Tasks);
  if (!Array.isArray(group.Tasks) || group.Tasks.length === 0) report(`${path}.Tasks`, 'needs at least one task');
  else if (
    !tasks.some(
      (task) => obj(task.Lifecycle) === undefined || str(obj(task.Lifecycle)!.Hook) === undefined || str(obj(task.Lifecycle)!.Hook) === '',
    )
  ) {
    report(`${path}.Tasks`, 'needs at least one main task (without a Lifecycle hook)');
  }
  checkDisk(report, path, group, tasks);
  const progress = num(obj(group.Update)?.ProgressDeadline);
  const names = new Set<string>();
  let leaders = 0;
  tasks.forEach((task, index) => {
    const taskName = str(task.Name);
    if (taskName !== undefined && names.has(taskName))
      report(`${path}.Tasks[${index}].Name`, `task name "${taskName}" is used twice in the group`);
    if (taskName !== undefined) names.add(taskName);
    if (task.Leader === true && ++leaders === 2) report(`${path}.Tasks[${index}].Leader`, 'only one task of a group may be the leader');
    checkTask(report, `${path}.Tasks[${index}]`, task, labels, progress, jobId);
  });
  checkPlacement(report, path, group, false);
  checkServices(report, path, group, labels, true);
}

function checkScaling(report: Report, path: string, group: Obj, count: number | undefined, jobType: string): void {
  const scaling = obj(group.Scaling);
  if (scaling === undefined) return;
  const at = `${path}.Scaling`;
  if (jobType === 'system' || jobType === 'sysbatch') report(at, `${jobType} jobs may not have Scaling`);
  const min = num(scaling.Min);
  const max = num(scaling.Max);
  if (scaling.Max === undefined) report(`${at}.Max`, 'is required (Nomad: "maximum count must be specified")');
  if (min !== undefined && min < 0) report(`${at}.Min`, 'must be 0 or more');
  if (min !== undefined && max !== undefined && max < min) report(`${at}.Max`, `must be at least Min (${max} < ${min})`);
  if (count !== undefined && min !== undefined && count < min) report(`${path}.Count`, `is below Scaling.Min (${count} < ${min})`);
  if (count !== undefined && max !== undefined && count > max) report(`${path}.Count`, `is above Scaling.Max (${count} > ${max})`);
  oneOf(report, `${at}.Type`, scaling.Type, ['', 'horizontal']);
}

function checkRestart(report: Report, path: string, restart: Obj): void {
  oneOf(report, `${path}.Mode`, restart.Mode, ['delay', 'fail']);
  const interval = num(restart.Interval);
  const attempts = num(restart.Attempts);
  const delay = num(restart.Delay);
  if (interval !== undefined && interval < 5 * SECOND_NS) report(`${path}.Interval`, `must be at least 5s, not ${showDuration(interval)}`);
  if (attempts !== undefined && attempts < 0) report(`${path}.Attempts`, 'must be 0 or more');
  if (attempts !== undefined && delay !== undefined && interval !== undefined && attempts * delay > interval) {
    report(path, `${attempts} attempts with a delay of ${showDuration(delay)} do not fit in an interval of ${showDuration(interval)}`);
  }
}

function checkReschedule(report: Report, path: string, value: unknown): void {
  const policy = obj(value);
  if (policy === undefined) return;
  const delay = num(policy.Delay);
  if (delay !== undefined && delay < 5 * SECOND_NS) report(`${path}.Delay`, `must be at least 5s, not ${showDuration(delay)}`);
  oneOf(report, `${path}.DelayFunction`, policy.DelayFunction, ['constant', 'exponential', 'fibonacci']);
  const max = num(policy.MaxDelay);
  if (max !== undefined && delay !== undefined && str(policy.DelayFunction) !== 'constant' && max < delay)
    report(`${path}.MaxDelay`, 'must be at least Delay');
}

/** The group's port labels, after checking them: unique, `^[a-z][a-z0-9_]*$`, values in range. */
function checkNetworks(report: Report, path: string, group: Obj): Set<string> {
  const labels = new Set<string>();
  list(group.Networks).forEach((network, n) => {
    const at = `${path}.Networks[${n}]`;
    const mode = str(network.Mode) ?? '';
    if (!['', 'host', 'bridge', 'none'].includes(mode) && !mode.startsWith('cni/'))
      report(`${at}.Mode`, `must be "host", "bridge", "none" or "cni/<name>", not "${mode}"`);
    for (const kind of ['DynamicPorts', 'ReservedPorts'] as const) {
      list(network[kind]).forEach((port, p) => {
        const pat = `${at}.${kind}[${p}]`;
        const label = str(port.Label);
        if (label === undefined || label === '') report(`${pat}.Label`, 'is required');
        else if (labels.has(label)) report(`${pat}.Label`, `port label "${label}" is used twice in the group`);
        else if (!/^[a-z][a-z0-9_]*$/.test(label))
          report(`${pat}.Label`, `"${label}" must match ^[a-z][a-z0-9_]*$ (it becomes NOMAD_PORT_<label>)`);
        if (label !== undefined) labels.add(label);
        const value = num(port.Value);
        if (value !== undefined && (value < 0 || value > 65535)) report(`${pat}.Value`, 'must be between 0 and 65535');
        if (kind === 'DynamicPorts' && value !== undefined && value !== 0)
          report(`${pat}.Value`, 'must be 0 for a dynamic port (Nomad picks it)');
        const to = num(port.To);
        if (to !== undefined && (to < -1 || to > 65535)) report(`${pat}.To`, 'must be between -1 and 65535');
        if (port.IgnoreCollision === true && mode !== 'host' && mode !== '')
          report(`${pat}.IgnoreCollision`, 'is only allowed in host network mode');
      });
    }
  });
  return labels;
}

/** `EphemeralDisk.SizeMB` ≥ 10 and above the tasks' logs (MaxFiles × MaxFileSizeMB, default 10 × 10). */
function checkDisk(report: Report, path: string, group: Obj, tasks: Obj[]): void {
  const size = num(obj(group.EphemeralDisk)?.SizeMB) ?? 300;
  if (size < 10) return void report(`${path}.EphemeralDisk.SizeMB`, `must be at least 10 MB, not ${size}`);
  const logs = tasks.reduce((sum, task) => {
    const config = obj(task.LogConfig);
    return sum + (num(config?.MaxFiles) ?? 10) * (num(config?.MaxFileSizeMB) ?? 10);
  }, 0);
  if (size <= logs)
    report(
      `${path}.EphemeralDisk.SizeMB`,
      `${size} MB must be more than the tasks' log storage (${logs} MB: LogConfig.MaxFiles × MaxFileSizeMB)`,
    );
}
