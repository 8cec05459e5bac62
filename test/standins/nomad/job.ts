/**
 * Job canonicalization (defaults of api.Job.Canonicalize + structs.Job.Canonicalize) and the
 * server-side validation Nomad answers with HTTP 500 and a go-multierror text body
 * (nomad/structs/structs.go). Jobs are plain JSON objects with Go field names.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export type Json = any;

export const SECOND = 1_000_000_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** hashicorp/go-multierror's default format. */
export function multierror(errors: readonly string[]): string {
  if (errors.length === 1) return `1 error occurred:\n\t* ${errors[0]}\n\n`;
  return `${errors.length} errors occurred:\n\t${errors.map((e) => `* ${e}`).join('\n\t')}\n\n`;
}

/** Go's time.Duration.String(): 10s, 1m0s, 1h0m0s, 500ms, 0s. */
export function goDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  let n = Math.abs(ns);
  if (n < SECOND) {
    if (n < 1000) return `${sign}${n}ns`;
    if (n < 1_000_000) return `${sign}${trim(n / 1000)}µs`;
    return `${sign}${trim(n / 1_000_000)}ms`;
  }
  const h = Math.floor(n / HOUR);
  n -= h * HOUR;
  const m = Math.floor(n / MINUTE);
  n -= m * MINUTE;
  const s = `${trim(n / SECOND)}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}

function trim(value: number): string {
  return String(Number(value.toFixed(9)));
}

/** Go's time.ParseDuration for the forms query strings use ("5s", "300ms", "1m30s"); null when invalid. */
export function parseGoDuration(text: string): number | null {
  const units: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: SECOND, m: MINUTE, h: HOUR };
  if (text === '0') return 0;
  const match = /^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(text);
  if (!match) return null;
  let total = 0;
  for (const part of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) total += Number(part[1]) * units[part[2]!]!;
  return match[1] === '-' ? -total : total;
}

const serviceRestart = { Delay: 15 * SECOND, Attempts: 2, Interval: 30 * MINUTE, Mode: 'fail', RenderTemplates: false };
const batchRestart = { Delay: 15 * SECOND, Attempts: 3, Interval: 24 * HOUR, Mode: 'fail', RenderTemplates: false };
const defaultUpdate = {
  Stagger: 30 * SECOND,
  MaxParallel: 1,
  HealthCheck: 'checks',
  MinHealthyTime: 10 * SECOND,
  HealthyDeadline: 5 * MINUTE,
  ProgressDeadline: 10 * MINUTE,
  Canary: 0,
  AutoRevert: false,
  AutoPromote: false,
};
const serviceReschedule = { Attempts: 0, Interval: 0, Delay: 30 * SECOND, DelayFunction: 'exponential', MaxDelay: HOUR, Unlimited: true };
const batchReschedule = { Attempts: 1, Interval: 24 * HOUR, Delay: 5 * SECOND, DelayFunction: 'constant', MaxDelay: 0, Unlimited: false };
const defaultMigrate = { MaxParallel: 1, HealthCheck: 'checks', MinHealthyTime: 10 * SECOND, HealthyDeadline: 5 * MINUTE };

function withDefaults<T extends object>(defaults: T, given: Json): T {
  return { ...defaults, ...(given ?? {}) };
}

/**
 * The fields structs.Job, TaskGroup and Task carry even when unset (null or their zero value): Nomad 1.11.3
 * answered GET /v1/job/:id with all of them (test/fixtures/agents/nomad.json).
 */
const JOB_FIELDS = {
  Affinities: null,
  Constraints: null,
  ConsulNamespace: '',
  DispatchIdempotencyToken: '',
  Meta: null,
  Multiregion: null,
  NomadTokenID: '',
  ParameterizedJob: null,
  Payload: null,
  Periodic: null,
  Spreads: null,
  UI: null,
  VaultNamespace: '',
  VersionTag: null,
  // The job-level update block api.Job.Canonicalize leaves (the groups' own are filled in).
  Update: {
    Stagger: 30 * SECOND,
    MaxParallel: 1,
    HealthCheck: '',
    MinHealthyTime: 0,
    HealthyDeadline: 0,
    ProgressDeadline: 0,
    Canary: 0,
    AutoRevert: false,
    AutoPromote: false,
  },
};
const GROUP_FIELDS = {
  Affinities: null,
  Constraints: null,
  Consul: null,
  Disconnect: null,
  MaxClientDisconnect: null,
  Meta: null,
  Networks: null,
  PreventRescheduleOnLost: false,
  Scaling: null,
  Services: null,
  ShutdownDelay: null,
  Spreads: null,
  StopAfterClientDisconnect: null,
  Volumes: null,
};
const TASK_FIELDS = {
  Actions: null,
  Affinities: null,
  Artifacts: null,
  CSIPluginConfig: null,
  Constraints: null,
  Consul: null,
  DispatchPayload: null,
  Env: null,
  Identities: null,
  KillSignal: '',
  Kind: '',
  Leader: false,
  Lifecycle: null,
  Meta: null,
  ScalingPolicies: null,
  Schedule: null,
  Secrets: null,
  Services: null,
  ShutdownDelay: 0,
  Templates: null,
  User: '',
  Vault: null,
  VolumeMounts: null,
  // The default workload identity every task gets.
  Identity: {
    Name: 'default',
    Audience: ['nomadproject.io'],
    ChangeMode: '',
    ChangeSignal: '',
    Env: false,
    File: false,
    Filepath: '',
    ServiceName: '',
    TTL: 0,
  },
};

/** api.Template.Canonicalize (api/tasks.go), then the struct's other fields (Uid, Gid, Wait, ChangeScript) as null. */
function canonicalizeTemplate(template: Json): Json {
  const filled = withDefaults(
    {
      SourcePath: '',
      DestPath: '',
      EmbeddedTmpl: '',
      ChangeMode: 'restart',
      ChangeSignal: '',
      ChangeScript: null,
      Once: false,
      Splay: 5 * SECOND,
      Perms: '0644',
      Uid: null,
      Gid: null,
      LeftDelim: '{{',
      RightDelim: '}}',
      Envvars: false,
      VaultGrace: 0,
      Wait: null,
      ErrMissingKey: false,
    },
    template,
  );
  filled.ChangeSignal = filled.ChangeSignal === '' && filled.ChangeMode === 'signal' ? 'SIGHUP' : String(filled.ChangeSignal).toUpperCase();
  return filled;
}

function withFields(target: Json, fields: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(fields)) if (!(key in target)) target[key] = structuredClone(value);
}

/** Fills the defaults a real server would; mutates and returns `job`. */
export function canonicalizeJob(job: Json, namespace: string, region: string): Json {
  job.Namespace = namespace;
  job.Region = job.Region && job.Region !== 'global' ? job.Region : region;
  job.Name ??= job.ID;
  job.Type ??= 'service';
  job.Priority ??= 50;
  job.AllAtOnce ??= false;
  if (!job.Datacenters || job.Datacenters.length === 0) job.Datacenters = ['*'];
  job.NodePool = job.NodePool || 'default';
  job.Stop ??= false;
  const isService = job.Type === 'service' || job.Type === 'system';
  for (const group of job.TaskGroups ?? []) {
    if (!group) continue;
    if (group.Count === undefined) group.Count = group.Scaling?.Min !== undefined ? group.Scaling.Min : 1;
    if (group.Scaling) {
      group.Scaling.Min ??= group.Count;
      group.Scaling.Enabled ??= true;
      group.Scaling.Type ||= 'horizontal';
      group.Scaling.Target = { Namespace: namespace, Job: job.ID, Group: group.Name };
    }
    group.EphemeralDisk = withDefaults({ Sticky: false, Migrate: false, SizeMB: 300 }, group.EphemeralDisk);
    group.RestartPolicy = withDefaults(isService ? serviceRestart : batchRestart, group.RestartPolicy);
    group.ReschedulePolicy = withDefaults(isService ? serviceReschedule : batchReschedule, group.ReschedulePolicy);
    if (job.Type === 'service') {
      group.Update = withDefaults(withDefaults(defaultUpdate, job.Update), group.Update);
      group.Migrate = withDefaults(withDefaults(defaultMigrate, job.Migrate), group.Migrate);
    }
    for (const network of group.Networks ?? []) {
      if (!network) continue;
      network.Mode ||= 'host';
      for (const port of [...(network.DynamicPorts ?? []), ...(network.ReservedPorts ?? [])]) {
        if (port) port.HostNetwork ||= 'default';
      }
    }
    for (const service of group.Services ?? []) if (service) canonicalizeService(service, job, group, null);
    for (const task of group.Tasks ?? []) {
      if (!task) continue;
      task.RestartPolicy = withDefaults(group.RestartPolicy, task.RestartPolicy);
      task.KillTimeout ??= 5 * SECOND;
      task.LogConfig = withDefaults({ MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false }, task.LogConfig);
      task.Resources = withDefaults({ CPU: task.Resources?.Cores ? 0 : 100, Cores: 0, MemoryMB: 300, MemoryMaxMB: 0 }, task.Resources);
      for (const artifact of task.Artifacts ?? []) {
        if (!artifact) continue;
        artifact.GetterMode ||= 'any';
        artifact.RelativeDest ||= 'local/';
      }
      for (const service of task.Services ?? []) if (service) canonicalizeService(service, job, group, task);
      if (Array.isArray(task.Templates))
        task.Templates = task.Templates.map((template: Json) => (template ? canonicalizeTemplate(template) : template));
      withFields(task, TASK_FIELDS);
    }
    withFields(group, GROUP_FIELDS);
    impliedConstraints(group);
  }
  withFields(job, JOB_FIELDS);
  return job;
}

/**
 * The constraints Nomad's register, plan and validate add (nomad/job_endpoint_hooks.go jobImpliedConstraints) for
 * what the stand-in runs: a group whose tasks need signals (KillSignal, templates changing by signal) gets
 * `${attr.os.signals} set_contains <sorted signals>`; a group or task with Consul services gets
 * `${attr.consul.version} semver >= 1.8.0` unless one on that attribute is there. Nomad 1.11.3 answered so.
 */
function impliedConstraints(group: Json): void {
  const signals = new Set<string>();
  for (const task of group.Tasks ?? []) {
    if (task?.KillSignal) signals.add(task.KillSignal);
    for (const template of task?.Templates ?? []) if (template?.ChangeMode === 'signal') signals.add(template.ChangeSignal);
  }
  const add = (target: Json, constraint: Json, sameLeft: boolean): void => {
    const present: Json[] = target.Constraints ?? [];
    const found = present.some(
      (c) => c.LTarget === constraint.LTarget && (sameLeft || (c.RTarget === constraint.RTarget && c.Operand === constraint.Operand)),
    );
    if (!found) target.Constraints = [...present, constraint];
  };
  if (signals.size > 0)
    add(group, { LTarget: '${attr.os.signals}', RTarget: [...signals].sort().join(','), Operand: 'set_contains' }, false);
  const consul = { LTarget: '${attr.consul.version}', RTarget: '>= 1.8.0', Operand: 'semver' };
  const isConsul = (service: Json): boolean => !service?.Provider || service.Provider === 'consul';
  if ((group.Services ?? []).some(isConsul)) add(group, { ...consul }, true);
  for (const task of group.Tasks ?? []) if ((task?.Services ?? []).some(isConsul)) add(task, { ...consul }, true);
}

function canonicalizeService(service: Json, job: Json, group: Json, task: Json | null): void {
  service.Name ||= task ? `${job.Name}-${group.Name}-${task.Name}` : `${job.Name}-${group.Name}`;
  service.AddressMode ||= 'auto';
  service.OnUpdate ||= 'require_healthy';
  service.Provider ||= 'consul';
  if (task) service.TaskName ||= task.Name;
  for (const check of service.Checks ?? []) {
    if (!check) continue;
    check.Name ||= `service: "${service.Name}" check`;
    check.OnUpdate ||= service.OnUpdate;
  }
}

const serviceName = /^(?:[a-z0-9]|[a-z0-9][a-z0-9-]{0,61}[a-z0-9])$/i;

/** structs.Job.Validate (the rules the reference lists); returns the error strings (empty = valid). */
export function validateJob(job: Json): string[] {
  const errors: string[] = [];
  if (!job.ID) errors.push('Missing job ID');
  else if (/\s/.test(job.ID)) errors.push('Job ID contains a space');
  else if (job.ID.includes('\0')) errors.push('Job ID contains a null character');
  if (!job.Name) errors.push('Missing job name');
  if (!['service', 'batch', 'system', 'sysbatch'].includes(job.Type)) errors.push(`Invalid job type: "${job.Type}"`);
  if (job.Priority < 1 || job.Priority > 100) errors.push('Job priority must be between [1, 100]');
  const groups: Json[] = job.TaskGroups ?? [];
  if (groups.length === 0) errors.push('Missing job task groups');
  const seen = new Map<string, number>();
  groups.forEach((group, index) => {
    if (!group?.Name) errors.push(`Job task group ${index + 1} missing name`);
    else if (seen.has(group.Name))
      errors.push(`Job task group ${index + 1} redefines '${group.Name}' from group ${seen.get(group.Name)! + 1}`);
    else seen.set(group.Name, index);
  });
  for (const group of groups) {
    if (!group) continue;
    const groupErrors = validateGroup(group);
    if (groupErrors.length > 0) errors.push(`Task group ${group.Name} validation failed: ${multierror(groupErrors)}`);
  }
  return errors;
}

function validateGroup(group: Json): string[] {
  const errors: string[] = [];
  if (!group.Name) errors.push('Missing task group name');
  if (group.Count < 0) errors.push("Task group count can't be negative");
  const tasks: Json[] = group.Tasks ?? [];
  if (tasks.length === 0) errors.push('Missing tasks for task group');
  const restart = group.RestartPolicy;
  if (!['delay', 'fail'].includes(restart.Mode)) errors.push(`Unsupported restart mode: "${restart.Mode}"`);
  if (restart.Interval < 5 * SECOND) errors.push(`Interval can not be less than 5s (got ${goDuration(restart.Interval)})`);
  if (restart.Attempts * restart.Delay > restart.Interval) {
    errors.push(
      `Nomad can't restart the TaskGroup ${restart.Attempts} times in an interval of ${goDuration(restart.Interval)} with a delay of ${goDuration(restart.Delay)}`,
    );
  }
  const disk = group.EphemeralDisk;
  if (disk.SizeMB < 10) errors.push(`minimum DiskMB value is 10; got ${disk.SizeMB}`);
  const update = group.Update;
  if (update) {
    if (!['checks', 'task_states', 'manual'].includes(update.HealthCheck))
      errors.push(`Invalid health check given: "${update.HealthCheck}"`);
    if (update.MaxParallel < 0) errors.push(`Max parallel can not be less than zero: ${update.MaxParallel} < 0`);
    if (update.Stagger <= 0) errors.push(`Stagger must be greater than zero: ${goDuration(update.Stagger)}`);
  }
  if (group.Scaling) {
    const scaling = group.Scaling;
    if (scaling.Max === undefined) errors.push('Scaling policy invalid: maximum count must be specified');
    else if (scaling.Max < scaling.Min) errors.push('Scaling policy invalid: maximum count must not be less than minimum count');
    if (scaling.Min < 0) errors.push('Scaling policy invalid: minimum count must not be less than zero');
    if (scaling.Max !== undefined && scaling.Max < group.Count) {
      errors.push('Scaling policy invalid: task group count must not be greater than maximum count in scaling policy');
    }
    if (group.Count < scaling.Min)
      errors.push('Scaling policy invalid: task group count must not be less than minimum count in scaling policy');
  }
  const labels = new Set<string>();
  for (const network of group.Networks ?? []) {
    for (const port of [...(network?.DynamicPorts ?? []), ...(network?.ReservedPorts ?? [])]) if (port?.Label) labels.add(port.Label);
  }
  const missing = new Map<string, string[]>();
  const services: Json[] = [...(group.Services ?? [])];
  for (const task of tasks) services.push(...(task?.Services ?? []));
  for (const service of services) {
    if (!service) continue;
    const checked = String(service.Name).replace(/\$\{[^}]*\}/g, 'a');
    if (!serviceName.test(checked)) {
      errors.push(
        `Task group service validation failed: 1 error occurred:\n\t* Service name must be valid per RFC 1123 and can contain only alphanumeric characters or dashes: "${service.Name}"\n\n`,
      );
    }
    if (service.PortLabel && !/^\d+$/.test(service.PortLabel) && !labels.has(service.PortLabel)) {
      missing.set(service.PortLabel, [...(missing.get(service.PortLabel) ?? []), service.Name]);
    }
    for (const check of service.Checks ?? []) {
      if (!check) continue;
      if (check.Type === 'http' && !check.Path)
        errors.push(`Task group service check validation failed: 1 error occurred:\n\t* http type must have http path\n\n`);
      if (!(check.Interval >= SECOND))
        errors.push(
          `Task group service check validation failed: 1 error occurred:\n\t* minimum check interval is 1s; got ${goDuration(check.Interval ?? 0)}\n\n`,
        );
      if (!(check.Timeout >= SECOND))
        errors.push(
          `Task group service check validation failed: 1 error occurred:\n\t* minimum check timeout is 1s; got ${goDuration(check.Timeout ?? 0)}\n\n`,
        );
    }
  }
  for (const [label, names] of missing) errors.push(`port label "${label}" referenced by services ${names.join(',')} does not exist`);
  const taskNames = new Map<string, number>();
  tasks.forEach((task, index) => {
    if (!task) return;
    if (task.Name && taskNames.has(task.Name))
      errors.push(`Task ${index + 1} redefines '${task.Name}' from task ${taskNames.get(task.Name)! + 1}`);
    else if (task.Name) taskNames.set(task.Name, index);
    const taskErrors = validateTask(task);
    if (taskErrors.length > 0) errors.push(`Task ${task.Name} validation failed: ${multierror(taskErrors)}`);
  });
  if (tasks.length > 0 && tasks.every((task) => task?.Lifecycle?.Hook && !task.Lifecycle.Sidecar)) {
    errors.push('Task group must have at least one main task');
  }
  return errors;
}

function validateTask(task: Json): string[] {
  const errors: string[] = [];
  if (!task.Name) errors.push('Missing task name');
  if (task.Name === 'alloc') errors.push(`Task name cannot be "alloc"`);
  if (/[/\\]/.test(task.Name ?? '')) errors.push('Task name cannot include slashes');
  if (!task.Driver) errors.push('Missing task driver');
  const r = task.Resources;
  if (r.CPU > 0 && r.Cores > 0) errors.push("Task can only ask for 'cpu' or 'cores' resource, not both.");
  if (r.Cores === 0 && r.CPU < 1) errors.push(`minimum CPU value is 1; got ${r.CPU}`);
  if (r.MemoryMB < 10) errors.push(`minimum MemoryMB value is 10; got ${r.MemoryMB}`);
  if (r.DiskMB > 0) errors.push("Task can't ask for disk resources, they have to be specified at the task group level.");
  if (r.MemoryMaxMB !== 0 && r.MemoryMaxMB !== -1 && r.MemoryMaxMB < r.MemoryMB) {
    errors.push(`MemoryMaxMB value (${r.MemoryMaxMB}) should be larger than MemoryMB value (${r.MemoryMB})`);
  }
  if (task.KillTimeout < 0) errors.push('KillTimeout must be a positive value');
  return errors;
}

/** The parts of a job a user submits; two jobs with equal specs are "unchanged" (no new version). */
export function specOf(job: Json): Json {
  const copy = structuredClone(job);
  for (const key of [
    'Status',
    'StatusDescription',
    'Stable',
    'Version',
    'SubmitTime',
    'CreateIndex',
    'ModifyIndex',
    'JobModifyIndex',
    'NomadTokenID',
  ]) {
    delete copy[key];
  }
  for (const group of copy.TaskGroups ?? []) {
    if (group?.Scaling) {
      delete group.Scaling.ID;
      delete group.Scaling.CreateIndex;
      delete group.Scaling.ModifyIndex;
    }
  }
  return copy;
}

export function sameJson(a: unknown, b: unknown): boolean {
  return stableStringify(a) === stableStringify(b);
}

export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Does changing group `a` into `b` need new allocations (anything other than count/scaling/update/meta)? */
export function destructiveChange(a: Json, b: Json): boolean {
  const strip = (g: Json) => ({ ...g, Count: 0, Scaling: null, Update: null, Migrate: null, ReschedulePolicy: null });
  return !sameJson(strip(a), strip(b));
}
