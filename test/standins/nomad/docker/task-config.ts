/**
 * The docker task `Config` block (hashicorp/nomad drivers/docker/config.go taskConfigSpec): which
 * keys the stand-in implements, which it knows but does not implement (refused, never silently
 * ignored), and the command line and working directory Docker would give the container.
 */
import type { OciImageConfig, RegistryAuth } from './image-source.js';

/** Keys the stand-in honours. `ports`/`port_map` only matter for bridge networking; tasks here share the host's network. */
const IMPLEMENTED = new Set([
  'image',
  'command',
  'args',
  'entrypoint',
  'work_dir',
  'auth',
  'ports',
  'network_mode',
  'force_pull',
  'labels',
]);

/** The rest of taskConfigSpec: valid in Nomad, not done by the stand-in. */
const NOT_IMPLEMENTED = new Set([
  'auth_soft_fail',
  'cap_add',
  'cap_drop',
  'cgroupns',
  'cpuset_cpus',
  'cpu_hard_limit',
  'cpu_cfs_period',
  'container_exists_attempts',
  'devices',
  'dns_search_domains',
  'dns_options',
  'dns_servers',
  'extra_hosts',
  'group_add',
  'healthchecks',
  'hostname',
  'init',
  'interactive',
  'ipc_mode',
  'ipv4_address',
  'ipv6_address',
  'advertise_ipv6_address',
  'isolation',
  'load',
  'logging',
  'mac_address',
  'memory_hard_limit',
  'mount',
  'mounts',
  'network_aliases',
  'oom_score_adj',
  'runtime',
  'pids_limit',
  'pid_mode',
  'port_map',
  'privileged',
  'image_pull_timeout',
  'readonly_rootfs',
  'security_opt',
  'shm_size',
  'storage_opt',
  'sysctl',
  'tty',
  'ulimit',
  'uts_mode',
  'userns_mode',
  'volumes',
  'volume_driver',
]);

export interface DockerTaskConfig {
  readonly image: string;
  readonly command: string | null;
  readonly args: readonly string[];
  readonly entrypoint: readonly string[] | null;
  readonly workDir: string | null;
  readonly auth: RegistryAuth | undefined;
}

/** Decodes `Config`, or returns the reason it cannot run (for a Driver Failure event). */
export function decodeDockerConfig(config: Record<string, any>): DockerTaskConfig | string {
  for (const key of Object.keys(config)) {
    if (NOT_IMPLEMENTED.has(key)) return `stand-in docker driver does not implement config key "${key}"`;
    if (!IMPLEMENTED.has(key))
      return `failed to decode driver config: Unsupported argument: An argument named "${key}" is not expected here.`;
  }
  if (typeof config.image !== 'string' || !config.image) {
    return 'failed to decode driver config: Missing required argument: The argument "image" is required, but no definition was found.';
  }
  if (config.network_mode !== undefined && config.network_mode !== 'host') {
    return `stand-in docker driver runs every task in the host network; network_mode "${config.network_mode}" is not implemented`;
  }
  const auth =
    config.auth && typeof config.auth === 'object'
      ? { username: String(config.auth.username ?? ''), password: String(config.auth.password ?? '') }
      : undefined;
  return {
    image: config.image,
    command: typeof config.command === 'string' && config.command ? config.command : null,
    args: ((config.args ?? []) as unknown[]).map(String),
    entrypoint: Array.isArray(config.entrypoint) ? config.entrypoint.map(String) : null,
    workDir: typeof config.work_dir === 'string' && config.work_dir ? config.work_dir : null,
    auth,
  };
}

/**
 * Docker's rule: the entrypoint (task's, else image's) followed by the cmd, where the cmd is
 * `command` + `args` when a command is given, `args` alone when only args are, else the image's Cmd.
 */
export function containerArgv(task: DockerTaskConfig, image: OciImageConfig, render: (text: string) => string): string[] {
  const entrypoint = task.entrypoint ?? image.config?.Entrypoint ?? [];
  const cmd = task.command !== null ? [task.command, ...task.args] : task.args.length > 0 ? task.args : (image.config?.Cmd ?? []);
  return [...entrypoint, ...cmd].map(render);
}

/** Image Env first, Nomad's and the task's env over it, key by key (as Docker merges container Env). */
export function containerEnv(image: OciImageConfig, taskEnv: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of image.config?.Env ?? []) {
    const equals = entry.indexOf('=');
    if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return { ...env, ...taskEnv };
}
