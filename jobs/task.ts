/**
 * The one task of a unit's group: `python -m svc.runtime` over the unpacked
 * bundle, by the docker driver (the image builder's image) or by
 * raw_exec/exec (the client's interpreter), with the bundle as an artifact
 * and the runtime's environment.
 */
import { CLASS_PARAMETERS_ENV } from '../core/model/workload/class-parameters.js';
import type { Workload } from '../core/model/workload/types.js';
import type { JobContext } from './context.js';
import { SECOND } from './durations.js';
import { TASK_NAME } from './names.js';
import { logConfig, taskResources } from './resources.js';
import type { Service, Task, TaskArtifact } from './types.js';
import { secretsTemplates } from './secrets-template.js';
import { volumeMounts } from './volumes.js';

/** Where the artifact unpacks the bundle, relative to the task dir (`${NOMAD_TASK_DIR}` is `<task>/local`). */
export const BUNDLE_DEST = 'local/app';

export function runtimeTask(workload: Workload, context: JobContext, labels: readonly string[], services: Service[], jobId: string): Task {
  const args = [
    '-m',
    'svc.runtime',
    '--root',
    '${NOMAD_TASK_DIR}/app',
    '--entry',
    context.entry,
    '--workload',
    workload.name,
    '--workers',
    String(workload.scaling.workers),
  ];
  const { driver } = context.cluster;
  const config = driverConfig(context, args, labels);
  return {
    Name: TASK_NAME,
    Driver: driver,
    Config: config,
    Env: runtimeEnv(workload, context, labels),
    Artifacts: [bundleArtifact(context)],
    Resources: taskResources(workload.resources, context.cluster),
    Services: services,
    LogConfig: { ...logConfig },
    // Time for workers to finish the requests they hold after SIGTERM.
    KillTimeout: 30 * SECOND,
    KillSignal: 'SIGTERM',
    // Secrets come from the job's Nomad Variable through a template: the job holds no value.
    ...secretsTemplates(workload, jobId),
    ...volumeMounts(workload),
  };
}

/** How the driver starts `python <args>`: in the image builder's image (docker), or with the client's interpreter. */
export function driverConfig(
  context: Pick<JobContext, 'cluster' | 'image'>,
  args: readonly string[],
  labels: readonly string[],
): Record<string, unknown> {
  return context.cluster.driver === 'docker'
    ? { image: dockerImage(context), command: 'python', args: [...args], ...(labels.length === 0 ? {} : { ports: [...labels] }) }
    : { command: context.cluster.python, args: [...args] };
}

function dockerImage(context: Pick<JobContext, 'image'>): string {
  if (context.image === null || context.image === '')
    throw new Error("compileJob: the docker driver needs context.image (the image builder's image name)");
  return context.image;
}

/**
 * What the runtime reads (core/infra/scheduler/local/runtime-command.ts sets the
 * same SVC_* names locally). On Nomad the workers listen on TCP instead of
 * Unix sockets: `SVC_WORKER_PORTS` holds one port per worker, interpolated
 * by Nomad from `NOMAD_PORT_<label>`, on `SVC_WORKER_HOST`.
 */
export function runtimeEnv(workload: Workload, context: JobContext, labels: readonly string[]): Record<string, string> {
  // Docker maps each host port to the same container port (no `To`): listen on every interface
  // inside the container. raw_exec/exec share the host's network: listen on the port's host IP only.
  const host = context.cluster.driver === 'docker' ? '0.0.0.0' : `\${NOMAD_IP_${labels[0] ?? 'w0'}}`;
  const env = baseEnv(workload, context, {
    SVC_WORKER_HOST: host,
    SVC_WORKER_PORTS: labels.map((label) => `\${NOMAD_PORT_${label}}`).join(','),
  });
  if (workload.scaling.checkpointEnabled) env.SVC_CHECKPOINT = '1';
  return env;
}

/** What every task of svc's reads, serving or not: the image's variables, where it belongs, `placement` (where it listens), and Python's settings. */
export function baseEnv(workload: Workload, context: JobContext, placement: Record<string, string> = {}): Record<string, string> {
  return {
    // The image's variables (Image.env) first, so that svc's own below win; the workload's secrets,
    // rendered by the task's template, win over both (Nomad applies template variables last).
    ...workload.image.env,
    SVC_WORKSPACE: context.workspace,
    SVC_APP: context.app,
    SVC_STAGE: context.stage,
    SVC_WORKLOAD: workload.name,
    ...(context.version === null ? {} : { SVC_VERSION: String(context.version) }),
    ...(workload.class?.bound === undefined ? {} : { [CLASS_PARAMETERS_ENV]: JSON.stringify(workload.class.bound) }),
    ...placement,
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONSAFEPATH: '1',
    ...(context.cluster.runtimePath === null ? {} : { PYTHONPATH: context.cluster.runtimePath }),
  };
}

/** go-getter unpacks the tar.gz (the signed URL has no .tar.gz suffix to go by) and checks its sha256 when known. */
export function bundleArtifact(context: JobContext): TaskArtifact {
  const options: Record<string, string> = { archive: 'tar.gz' };
  if (context.bundle.sha256 !== null) options.checksum = `sha256:${context.bundle.sha256}`;
  return { GetterSource: context.bundle.url, GetterOptions: options, GetterMode: 'dir', RelativeDest: BUNDLE_DEST };
}
