import path from 'node:path';
import { sdkPythonPath } from '../../../model/paths.js';
import { CLASS_PARAMETERS_ENV } from '../../../model/workload/class-parameters.js';
import { VOLUME_MOUNTS_ENV } from '../../../model/volume-mounts.js';
import type { DeploymentUnit } from '../types.js';

/** The fd on which the runtime writes its events (the fourth pipe of spawnGroup). */
const EVENTS_FD = '3';

/**
 * `python -m svc.runtime` serving one container: worker `i` on `<socketDir>/<container>-w<i>.sock`;
 * it joins its cgroup first (`--cgroup`, one `cgroup.procs` file per hierarchy).
 */
export function containerArgs(unit: DeploymentUnit, socketDir: string, container: string, cgroupProcs: readonly string[] = []): string[] {
  return [
    ...moduleArgs(unit),
    '--socket-dir',
    socketDir,
    '--container',
    container,
    '--workers',
    String(unit.workload.scaling.workers),
    ...cgroupProcs.flatMap((file) => ['--cgroup', file]),
  ];
}

/** `python -m svc.runtime template`: the warmed process that forks the unit's containers. */
export function templateArgs(unit: DeploymentUnit, controlPath: string): string[] {
  return ['-m', 'svc.runtime', 'template', ...moduleArgs(unit).slice(2), '--control', controlPath];
}

/** `python -m svc.runtime zygote`: the image's warmed runtime, which forks containers of any of its workloads. */
export function zygoteArgs(controlPath: string): string[] {
  return ['-m', 'svc.runtime', 'zygote', '--control', controlPath, '--events-fd', EVENTS_FD];
}

/** Must match `container_sockets()` in sdk/python/svc/runtime/_container.py. */
export function workerSocketPaths(socketDir: string, container: string, workers: number): string[] {
  return Array.from({ length: workers }, (_, index) => path.join(socketDir, `${container}-w${index}.sock`));
}

function moduleArgs(unit: DeploymentUnit): string[] {
  const { source, workload } = unit;
  return ['-m', 'svc.runtime', '--root', source.root, '--entry', source.entry, '--workload', workload.name, '--events-fd', EVENTS_FD];
}

/** `gpus`: what the container's environment says of GPUs (gpu-allocator.ts gpuEnv), set last: no image or secret replaces it. */
export function runtimeEnv(unit: DeploymentUnit, gpus: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  // The image's variables, then the workload's secrets over them; svc's own variables below may not be
  // replaced (the manifest check and core/services/secrets/rules.ts refuse those names anyway).
  const env = { ...baseRuntimeEnv(), ...unit.workload.image.env, ...unit.secretEnv };
  env.SVC_APP = unit.ref.app;
  env.SVC_WORKLOAD = unit.workload.name;
  env.SVC_STAGE = unit.ref.stage;
  env.SVC_WORKSPACE = unit.ref.workspace;
  const bound = unit.workload.class?.bound;
  if (bound !== undefined) env[CLASS_PARAMETERS_ENV] = JSON.stringify(bound);
  const mounts = unit.mounts ?? [];
  if (mounts.length > 0) {
    env[VOLUME_MOUNTS_ENV] = JSON.stringify(mounts.map((m) => ({ path: m.path, source: m.source, read_only: m.readOnly })));
  }
  return { ...env, ...gpus };
}

/** What every runtime process of any unit gets (a zygote's own environment): runtimeEnv() without the unit. */
export function baseRuntimeEnv(): NodeJS.ProcessEnv {
  // No PYTHONUNBUFFERED: the runtime line-buffers its output itself, so that each line
  // leaves in one write and the lines of workers sharing a pipe do not interleave.
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONDONTWRITEBYTECODE: '1' };
  delete env.PYTHONUNBUFFERED;
  // `-m` would put the project folder (the cwd) first on sys.path before the runtime's own
  // imports, so that a project file such as queue.py replaced the standard module for it.
  // Python 3.11+ honours this; the runtime drops it again before importing the user's code.
  env.PYTHONSAFEPATH = '1';
  env.PYTHONPATH = sdkPythonPath;
  delete env.VIRTUAL_ENV;
  return env;
}

/** The environment a container of `unit` runs with, as plain strings (what a zygote's fork request carries). */
export function containerEnv(unit: DeploymentUnit, gpus: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(runtimeEnv(unit, gpus))) if (value !== undefined) env[name] = value;
  return env;
}
