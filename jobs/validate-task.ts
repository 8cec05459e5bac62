/**
 * Task rules (`structs.Task.Validate`, `Resources.Validate`, the drivers'
 * config specs): names, the driver whitelist with each driver's Config keys,
 * resources (CPU xor Cores, memory ≥ 10 MB), log config, artifacts and templates.
 */
import { driverConfigs } from './schema.js';
import { checkPlacement, list, num, obj, oneOf, str, type Obj, type Report } from './rules.js';
import { checkServices } from './validate-services.js';
import { checkTemplates } from './validate-templates.js';

export function checkTask(
  report: Report,
  path: string,
  task: Obj,
  labels: ReadonlySet<string>,
  progressDeadline: number | undefined,
  jobId?: string,
): void {
  const name = str(task.Name);
  if (name === undefined || name === '') report(`${path}.Name`, 'is required');
  else if (name === 'alloc') report(`${path}.Name`, '"alloc" is reserved');
  else if (/[/\\\u0000]/.test(name)) report(`${path}.Name`, 'must not contain "/", "\\" or NUL');
  const driver = str(task.Driver);
  if (driver === undefined || driver === '') report(`${path}.Driver`, 'is required');
  else if (!(driver in driverConfigs))
    report(`${path}.Driver`, `svc runs tasks with ${Object.keys(driverConfigs).join(', ')}, not "${driver}"`);
  else checkDriverConfig(report, `${path}.Config`, driver, task.Config, labels);
  const hook = obj(task.Lifecycle);
  if (hook !== undefined) oneOf(report, `${path}.Lifecycle.Hook`, hook.Hook, ['prestart', 'poststart', 'poststop']);
  checkResources(report, `${path}.Resources`, task.Resources);
  const kill = num(task.KillTimeout);
  if (kill !== undefined && kill < 0) report(`${path}.KillTimeout`, 'must be 0 or more');
  if (kill !== undefined && progressDeadline !== undefined && progressDeadline > 0 && kill > progressDeadline)
    report(`${path}.KillTimeout`, "must not exceed the group's Update.ProgressDeadline");
  const shutdown = num(task.ShutdownDelay);
  if (shutdown !== undefined && shutdown < 0) report(`${path}.ShutdownDelay`, 'must be 0 or more');
  const logs = obj(task.LogConfig);
  for (const field of ['MaxFiles', 'MaxFileSizeMB'] as const) {
    const value = num(logs?.[field]);
    if (value !== undefined && value < 1) report(`${path}.LogConfig.${field}`, 'must be at least 1');
  }
  list(task.Artifacts).forEach((artifact, index) => {
    if (!str(artifact.GetterSource)) report(`${path}.Artifacts[${index}].GetterSource`, 'is required');
    oneOf(report, `${path}.Artifacts[${index}].GetterMode`, artifact.GetterMode, ['any', 'file', 'dir']);
  });
  checkTemplates(report, path, task, jobId);
  checkPlacement(report, path, task, true);
  checkServices(report, path, task, labels, false);
}

function checkDriverConfig(report: Report, path: string, driver: string, value: unknown, labels: ReadonlySet<string>): void {
  const config = obj(value);
  if (config === undefined) return void report(path, `the ${driver} driver needs a Config object`);
  const spec = driverConfigs[driver]!;
  for (const key of Object.keys(config)) {
    if (!spec.keys.includes(key))
      report(`${path}.${key}`, `unknown ${driver} config key "${key}" (Nomad would only fail when the client starts the task)`);
  }
  const required = config[spec.required];
  if (typeof required !== 'string' || required === '')
    report(`${path}.${spec.required}`, `the ${driver} driver needs "${spec.required}" (a non-empty string)`);
  if (config.args !== undefined && (!Array.isArray(config.args) || config.args.some((a) => typeof a !== 'string')))
    report(`${path}.args`, 'must be a list of strings');
  if (config.ports !== undefined) {
    if (!Array.isArray(config.ports)) report(`${path}.ports`, 'must be a list of port labels');
    else
      config.ports.forEach((port, index) => {
        if (typeof port !== 'string' || !labels.has(port))
          report(`${path}.ports[${index}]`, `port label ${JSON.stringify(port)} does not exist in the group's Networks`);
      });
  }
}

function checkResources(report: Report, path: string, value: unknown): void {
  const resources = obj(value);
  if (resources === undefined) return;
  const cpu = num(resources.CPU);
  const cores = num(resources.Cores);
  const memory = num(resources.MemoryMB);
  if (cpu !== undefined && cores !== undefined && cores > 0) report(`${path}.CPU`, 'CPU and Cores are mutually exclusive; send one');
  else if (cores !== undefined && cores < 0) report(`${path}.Cores`, 'must be at least 1');
  else if ((cores === undefined || cores === 0) && cpu !== undefined && cpu < 1) report(`${path}.CPU`, 'must be at least 1 MHz');
  if (memory !== undefined && memory < 10) report(`${path}.MemoryMB`, `must be at least 10 MB, not ${memory}`);
  const max = num(resources.MemoryMaxMB);
  if (max !== undefined && max !== 0 && max !== -1 && memory !== undefined && max < memory)
    report(`${path}.MemoryMaxMB`, 'must be 0, -1 or at least MemoryMB');
  const disk = num(resources.DiskMB);
  if (disk !== undefined && disk !== 0)
    report(`${path}.DiskMB`, "task-level DiskMB is an error in Nomad; size the group's EphemeralDisk.SizeMB instead");
  const secrets = num(resources.SecretsMB);
  if (secrets !== undefined && memory !== undefined && secrets > memory) report(`${path}.SecretsMB`, 'must not exceed MemoryMB');
  if (resources.Networks !== undefined) report(`${path}.Networks`, "task-level networks are legacy; declare ports in the group's Networks");
  list(resources.Devices).forEach((device, index) => {
    checkDevice(report, `${path}.Devices[${index}]`, device);
  });
}

/** `RequestedDevice.Validate`: a name of one to three parts, a count of at least 1, constraints as a task's; svc's regexps compile. */
function checkDevice(report: Report, path: string, device: Obj): void {
  const name = str(device.Name);
  if (name === undefined || !/^[^/\s]+(\/[^/\s]+){0,2}$/.test(name))
    report(`${path}.Name`, 'must be a device: type, vendor/type or vendor/type/name, like "nvidia/gpu"');
  const count = num(device.Count);
  if (count !== undefined && count < 1) report(`${path}.Count`, 'must be at least 1 (Nomad would take 0 as 1)');
  checkPlacement(report, path, device, true);
  for (const kind of ['Constraints', 'Affinities'] as const) {
    list(device[kind]).forEach((rule, index) => {
      const target = str(rule.RTarget);
      if (str(rule.Operand) !== 'regexp' || target === undefined) return;
      // RE2 and JavaScript agree on what svc writes; only the (?i) prefix is RE2's alone.
      try {
        new RegExp(target.replace(/^\(\?i\)/, ''), 'i');
      } catch (error) {
        report(`${path}.${kind}[${index}].RTarget`, `is not a regular expression: ${(error as Error).message}`);
      }
    });
  }
}
