import assert from 'node:assert/strict';
import { compileJob } from '../../jobs/compile.js';
import { validateJob } from '../../jobs/validate.js';
import { jobContext, workload } from './fixtures.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A valid job (two workers) as plain JSON, to break by hand. */
function valid(): Json {
  return JSON.parse(
    JSON.stringify(
      compileJob(workload('endpoint', { scaling: { workers: 2, autoscaler: { minContainers: 1, maxContainers: 5 } } }), jobContext()),
    ),
  );
}
const G = (body: Json) => body.Job.TaskGroups[0];
const T = (body: Json) => G(body).Tasks[0];

/** [rule, how to break it, the path the issue must name, what its message says]. */
const broken: [string, (body: Json) => void, string, RegExp][] = [
  ['the body has a Job', (b) => delete b.Job, 'Job', /required/],
  ['unknown envelope keys are refused', (b) => (b.PreserveCount = true), 'PreserveCount', /unknown key/],
  ['unknown job keys are refused', (b) => (b.Job.Datacenter = ['dc1']), 'Job.Datacenter', /unknown key "Datacenter"/],
  [
    'keys must have the exact Go case',
    (b) => {
      b.Job.id = b.Job.ID;
    },
    'Job.id',
    /write "ID"/,
  ],
  [
    'an unknown key deep in a group is refused',
    (b) => (G(b).Networks[0].DynamicPorts[0].Lable = 'x'),
    'Job.TaskGroups[0].Networks[0].DynamicPorts[0].Lable',
    /unknown key/,
  ],
  [
    '"Memory" is not MemoryMB',
    (b) => {
      T(b).Resources.Memory = 512;
    },
    'Job.TaskGroups[0].Tasks[0].Resources.Memory',
    /unknown key/,
  ],
  ['server-only job keys are refused', (b) => (b.Job.Stop = true), 'Job.Stop', /set by the Nomad server/],
  ['durations are not strings', (b) => (G(b).RestartPolicy.Delay = '5s'), 'Job.TaskGroups[0].RestartPolicy.Delay', /integer nanoseconds/],
  ['durations are integers', (b) => (G(b).ShutdownDelay = 1.5), 'Job.TaskGroups[0].ShutdownDelay', /integer number of nanoseconds/],
  ['types are checked', (b) => (G(b).Count = '2'), 'Job.TaskGroups[0].Count', /must be an integer/],
  ['Meta values are strings', (b) => (b.Job.Meta.svc_workers = 2), 'Job.Meta.svc_workers', /must be a string/],
  ['Job.ID is required', (b) => delete b.Job.ID, 'Job.ID', /required/],
  ['Job.ID has no spaces', (b) => (b.Job.ID = 'svc shop'), 'Job.ID', /spaces/],
  ['Job.ID follows the DNS rule', (b) => (b.Job.ID = 'svc_Shop'), 'Job.ID', /ID rule/],
  ['Job.Type is a Nomad type', (b) => (b.Job.Type = 'daemon'), 'Job.Type', /one of/],
  ['Job.Priority is 1..100', (b) => (b.Job.Priority = 101), 'Job.Priority', /between 1 and 100/],
  ['Job.Namespace matches its pattern', (b) => (b.Job.Namespace = 'my ns'), 'Job.Namespace', /a-zA-Z0-9-/],
  ['Datacenters are non-empty', (b) => (b.Job.Datacenters = ['']), 'Job.Datacenters[0]', /not be empty/],
  ['Periodic is for batch jobs', (b) => (b.Job.Periodic = { Spec: '* * * * *' }), 'Job.Periodic', /batch/],
  ['Meta keys are Consul-safe', (b) => (b.Job.Meta['svc.app'] = 'x'), 'Job.Meta.svc.app', /letters, digits/],
  [
    'Meta keys do not start with consul-',
    (b) => (T(b).Services[0].Meta['consul-x'] = 'x'),
    'Job.TaskGroups[0].Tasks[0].Services[0].Meta.consul-x',
    /reserved/,
  ],
  ['Meta values are at most 512 characters', (b) => (b.Job.Meta.svc_route = `/${'a'.repeat(600)}`), 'Job.Meta.svc_route', /512/],
  ['UI.Description is at most 1000 characters', (b) => (b.Job.UI.Description = 'x'.repeat(1001)), 'Job.UI.Description', /1000/],
  ['there is at least one task group', (b) => (b.Job.TaskGroups = []), 'Job.TaskGroups', /at least one task group/],
  ['group names are unique', (b) => b.Job.TaskGroups.push(JSON.parse(JSON.stringify(G(b)))), 'Job.TaskGroups[1].Name', /used twice/],
  ['Scaling.Max is present', (b) => delete G(b).Scaling.Max, 'Job.TaskGroups[0].Scaling.Max', /required/],
  ['Scaling.Max is at least Min', (b) => (G(b).Scaling.Min = 9), 'Job.TaskGroups[0].Scaling.Max', /at least Min/],
  ['Count is at least Scaling.Min', (b) => (G(b).Count = 0), 'Job.TaskGroups[0].Count', /below Scaling.Min/],
  ['Count is at most Scaling.Max', (b) => (G(b).Count = 6), 'Job.TaskGroups[0].Count', /above Scaling.Max/],
  ['Update.MaxParallel is not negative', (b) => (G(b).Update.MaxParallel = -1), 'Job.TaskGroups[0].Update.MaxParallel', /0 or more/],
  ['Update.HealthCheck is an enum', (b) => (G(b).Update.HealthCheck = 'http'), 'Job.TaskGroups[0].Update.HealthCheck', /one of/],
  [
    'MinHealthyTime < HealthyDeadline',
    (b) => Object.assign(G(b).Update, { MinHealthyTime: 60e9, HealthyDeadline: 30e9 }),
    'Job.TaskGroups[0].Update.MinHealthyTime',
    /less than HealthyDeadline/,
  ],
  ['Update.Stagger is positive', (b) => (G(b).Update.Stagger = 0), 'Job.TaskGroups[0].Update.Stagger', /greater than 0/],
  ['RestartPolicy.Mode is delay or fail', (b) => (G(b).RestartPolicy.Mode = 'retry'), 'Job.TaskGroups[0].RestartPolicy.Mode', /one of/],
  [
    'RestartPolicy.Interval is at least 5s',
    (b) => (G(b).RestartPolicy.Interval = 1e9),
    'Job.TaskGroups[0].RestartPolicy.Interval',
    /at least 5s/,
  ],
  [
    'restart attempts fit in the interval',
    (b) => Object.assign(G(b).RestartPolicy, { Attempts: 100, Delay: 10e9, Interval: 60e9 }),
    'Job.TaskGroups[0].RestartPolicy',
    /do not fit/,
  ],
  [
    'ReschedulePolicy.Delay is at least 5s',
    (b) => (G(b).ReschedulePolicy.Delay = 1e9),
    'Job.TaskGroups[0].ReschedulePolicy.Delay',
    /at least 5s/,
  ],
  [
    'ReschedulePolicy.DelayFunction is an enum',
    (b) => (G(b).ReschedulePolicy.DelayFunction = 'linear'),
    'Job.TaskGroups[0].ReschedulePolicy.DelayFunction',
    /one of/,
  ],
  ['EphemeralDisk.SizeMB is at least 10', (b) => (G(b).EphemeralDisk.SizeMB = 5), 'Job.TaskGroups[0].EphemeralDisk.SizeMB', /at least 10/],
  [
    'the ephemeral disk exceeds the log allowance',
    (b) => (T(b).LogConfig = { MaxFiles: 10, MaxFileSizeMB: 50 }),
    'Job.TaskGroups[0].EphemeralDisk.SizeMB',
    /log storage \(500 MB:/,
  ],
  [
    'port labels are unique',
    (b) => (G(b).Networks[0].DynamicPorts[1].Label = 'w0'),
    'Job.TaskGroups[0].Networks[0].DynamicPorts[1].Label',
    /used twice/,
  ],
  [
    'port labels follow the env-var rule',
    (b) => (G(b).Networks[0].DynamicPorts[0].Label = 'web-http'),
    'Job.TaskGroups[0].Networks[0].DynamicPorts[0].Label',
    /a-z0-9_/,
  ],
  [
    'dynamic ports have Value 0',
    (b) => (G(b).Networks[0].DynamicPorts[0].Value = 8080),
    'Job.TaskGroups[0].Networks[0].DynamicPorts[0].Value',
    /must be 0/,
  ],
  ['the network mode is known', (b) => (G(b).Networks[0].Mode = 'overlay'), 'Job.TaskGroups[0].Networks[0].Mode', /host/],
  ['a group has a main task', (b) => (T(b).Lifecycle = { Hook: 'prestart' }), 'Job.TaskGroups[0].Tasks', /main task/],
  ['task names are not "alloc"', (b) => (T(b).Name = 'alloc'), 'Job.TaskGroups[0].Tasks[0].Name', /reserved/],
  ['task names have no slashes', (b) => (T(b).Name = 'a/b'), 'Job.TaskGroups[0].Tasks[0].Name', /"\/"/],
  ['the driver is docker, raw_exec or exec', (b) => (T(b).Driver = 'java'), 'Job.TaskGroups[0].Tasks[0].Driver', /docker, raw_exec, exec/],
  ['docker needs an image', (b) => delete T(b).Config.image, 'Job.TaskGroups[0].Tasks[0].Config.image', /needs "image"/],
  [
    'driver config keys are whitelisted',
    (b) => (T(b).Config.port_map = [{ w0: 8080 }]),
    'Job.TaskGroups[0].Tasks[0].Config.port_map',
    /unknown docker config key/,
  ],
  ['docker ports name group labels', (b) => T(b).Config.ports.push('http'), 'Job.TaskGroups[0].Tasks[0].Config.ports[2]', /does not exist/],
  [
    'raw_exec needs a command',
    (b) => {
      T(b).Driver = 'raw_exec';
      T(b).Config = { args: [] };
    },
    'Job.TaskGroups[0].Tasks[0].Config.command',
    /needs "command"/,
  ],
  ['MemoryMB is at least 10', (b) => (T(b).Resources.MemoryMB = 8), 'Job.TaskGroups[0].Tasks[0].Resources.MemoryMB', /at least 10 MB/],
  ['CPU is at least 1 MHz', (b) => (T(b).Resources.CPU = 0), 'Job.TaskGroups[0].Tasks[0].Resources.CPU', /at least 1 MHz/],
  ['CPU and Cores are exclusive', (b) => (T(b).Resources.Cores = 2), 'Job.TaskGroups[0].Tasks[0].Resources.CPU', /mutually exclusive/],
  [
    'MemoryMaxMB is 0, -1 or at least MemoryMB',
    (b) => (T(b).Resources.MemoryMaxMB = 100),
    'Job.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB',
    /at least MemoryMB/,
  ],
  ['task-level DiskMB is an error', (b) => (T(b).Resources.DiskMB = 100), 'Job.TaskGroups[0].Tasks[0].Resources.DiskMB', /EphemeralDisk/],
  ['LogConfig.MaxFiles is at least 1', (b) => (T(b).LogConfig.MaxFiles = 0), 'Job.TaskGroups[0].Tasks[0].LogConfig.MaxFiles', /at least 1/],
  [
    'artifacts have a source',
    (b) => (T(b).Artifacts[0].GetterSource = ''),
    'Job.TaskGroups[0].Tasks[0].Artifacts[0].GetterSource',
    /required/,
  ],
  [
    'distinct_hosts is not a task constraint',
    (b) => (T(b).Constraints = [{ Operand: 'distinct_hosts' }]),
    'Job.TaskGroups[0].Tasks[0].Constraints[0].Operand',
    /not allowed on a task/,
  ],
  [
    'constraint operands are known',
    (b) => (b.Job.Constraints = [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '~=' }]),
    'Job.Constraints[0].Operand',
    /one of/,
  ],
  [
    'affinity weights are -100..100 and not 0',
    (b) => (b.Job.Affinities = [{ LTarget: '${node.class}', RTarget: 'gpu', Weight: 200 }]),
    'Job.Affinities[0].Weight',
    /between -100 and 100/,
  ],
  [
    'service names are RFC 1123 labels',
    (b) => (T(b).Services[0].Name = 'svc.shop_hello'),
    'Job.TaskGroups[0].Tasks[0].Services[0].Name',
    /not a valid service name/,
  ],
  [
    'service names are at most 63 characters',
    (b) => (T(b).Services[0].Name = 'a'.repeat(64)),
    'Job.TaskGroups[0].Tasks[0].Services[0].Name',
    /not a valid service name/,
  ],
  [
    'service port labels exist',
    (b) => (T(b).Services[0].PortLabel = 'http'),
    'Job.TaskGroups[0].Tasks[0].Services[0].PortLabel',
    /port label "http" does not exist/,
  ],
  [
    'a service name is used once per port',
    (b) => (T(b).Services[1].PortLabel = 'w0'),
    'Job.TaskGroups[0].Tasks[0].Services[1].Name',
    /duplicate/,
  ],
  [
    'alloc address mode is for group services',
    (b) => (T(b).Services[0].AddressMode = 'alloc'),
    'Job.TaskGroups[0].Tasks[0].Services[0].AddressMode',
    /group services/,
  ],
  [
    'Connect is refused',
    (b) => (T(b).Services[0].Connect = { SidecarService: {} }),
    'Job.TaskGroups[0].Tasks[0].Services[0].Connect',
    /unknown key/,
  ],
  [
    'check types depend on the provider',
    (b) => {
      T(b).Services[0].Provider = 'nomad';
      T(b).Services[0].Checks[0].Type = 'grpc';
    },
    'Job.TaskGroups[0].Tasks[0].Services[0].Checks[0].Type',
    /one of "http", "tcp"/,
  ],
  [
    'http checks have a path',
    (b) => delete T(b).Services[0].Checks[0].Path,
    'Job.TaskGroups[0].Tasks[0].Services[0].Checks[0].Path',
    /required for an http check/,
  ],
  [
    'check paths are relative',
    (b) => (T(b).Services[0].Checks[0].Path = 'http://x/_svc/health'),
    'Job.TaskGroups[0].Tasks[0].Services[0].Checks[0].Path',
    /relative path/,
  ],
  [
    'check intervals are at least 1s',
    (b) => (T(b).Services[0].Checks[0].Interval = 500e6),
    'Job.TaskGroups[0].Tasks[0].Services[0].Checks[0].Interval',
    /at least 1s/,
  ],
  [
    'check timeouts are required',
    (b) => delete T(b).Services[0].Checks[0].Timeout,
    'Job.TaskGroups[0].Tasks[0].Services[0].Checks[0].Timeout',
    /required/,
  ],
  [
    'check port labels exist',
    (b) => (T(b).Services[0].Checks[0].PortLabel = 'w9'),
    'Job.TaskGroups[0].Tasks[0].Services[0].Checks[0].PortLabel',
    /does not exist/,
  ],
  [
    'nomad-provider checks have no Consul-only fields',
    (b) => {
      T(b).Services[0].Provider = 'nomad';
      T(b).Services[0].Checks[0].SuccessBeforePassing = 2;
    },
    'Job.TaskGroups[0].Tasks[0].Services[0].Checks[0].SuccessBeforePassing',
    /not supported by the nomad/,
  ],
  ['EvalPriority is 1..100', (b) => (b.EvalPriority = 0), 'EvalPriority', /between 1 and 100/],
];

describe('validateJob()', () => {
  it('accepts a compiled job', () => {
    assert.deepEqual(validateJob(valid()), []);
  });

  for (const [rule, breakIt, path, message] of broken) {
    it(`refuses a job where not: ${rule} (${path})`, () => {
      const body = valid();
      breakIt(body);
      const issues = validateJob(body);
      const found = issues.find((issue) => issue.path === path);
      assert.ok(found, `no issue at ${path}; got ${JSON.stringify(issues, null, 2)}`);
      assert.match(found.message, message);
    });
  }

  it('reports every problem at once, each with its path', () => {
    const body = valid();
    T(body).Resources.MemoryMB = 1;
    G(body).RestartPolicy.Delay = '5s';
    b_unknown(body);
    const paths = validateJob(body).map((issue) => issue.path);
    assert.ok(paths.includes('Job.TaskGroups[0].Tasks[0].Resources.MemoryMB'));
    assert.ok(paths.includes('Job.TaskGroups[0].RestartPolicy.Delay'));
    assert.ok(paths.includes('Job.Oops'));
  });

  it('refuses a body that is not an object', () => {
    assert.equal(validateJob('job')[0]!.path, '');
    assert.equal(validateJob(null).length, 1);
  });
});

function b_unknown(body: Json): void {
  body.Job.Oops = 1;
}
