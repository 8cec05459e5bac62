/** The task environment of hashicorp/nomad client/taskenv/env.go, and `${...}` interpolation. */
import type { Json } from './job.js';

export interface AllocatedPort {
  readonly Label: string;
  readonly Value: number;
  readonly To: number;
  readonly HostIP: string;
}

export interface EnvInput {
  readonly job: Json;
  readonly group: Json;
  readonly task: Json | null;
  readonly allocId: string;
  readonly allocName: string;
  readonly allocIndex: number;
  readonly ports: readonly AllocatedPort[];
  readonly allocDir: string;
  readonly datacenter: string;
  readonly nodeName: string;
  /** Task dirs as a container sees them (/alloc, /local, /secrets): drivers with image filesystem isolation (task_dir_hook.go). */
  readonly containerPaths?: boolean;
}

/** Keys with these prefixes have characters other than [A-Za-z0-9_.] replaced by `_`. */
function clean(key: string): string {
  return key.replace(/[^A-Za-z0-9_.]/g, '_');
}

export function nomadEnv(input: EnvInput): Record<string, string> {
  const { job, group, task } = input;
  const env: Record<string, string> = {};
  const set = (key: string, value: string) => {
    env[clean(key)] = value;
  };
  const inContainer = input.containerPaths === true;
  set('NOMAD_ALLOC_DIR', inContainer ? '/alloc' : `${input.allocDir}/alloc`);
  if (task) {
    set('NOMAD_TASK_DIR', inContainer ? '/local' : `${input.allocDir}/${task.Name}/local`);
    set('NOMAD_SECRETS_DIR', inContainer ? '/secrets' : `${input.allocDir}/${task.Name}/secrets`);
    const r = task.Resources ?? {};
    if (r.MemoryMB) set('NOMAD_MEMORY_LIMIT', String(r.MemoryMB));
    if (r.MemoryMaxMB > 0) set('NOMAD_MEMORY_MAX_LIMIT', String(r.MemoryMaxMB));
    if (r.CPU) set('NOMAD_CPU_LIMIT', String(r.CPU));
    if (r.Cores) set('NOMAD_CPU_CORES', Array.from({ length: r.Cores }, (_, i) => i).join(','));
    set('NOMAD_TASK_NAME', task.Name);
  }
  set('NOMAD_ALLOC_ID', input.allocId);
  set('NOMAD_SHORT_ALLOC_ID', input.allocId.slice(0, 8));
  set('NOMAD_ALLOC_NAME', input.allocName);
  set('NOMAD_GROUP_NAME', group.Name);
  set('NOMAD_ALLOC_INDEX', String(input.allocIndex));
  set('NOMAD_JOB_ID', job.ID);
  set('NOMAD_JOB_NAME', job.Name);
  if (job.ParentID) set('NOMAD_JOB_PARENT_ID', job.ParentID);
  set('NOMAD_DC', input.datacenter);
  set('NOMAD_NAMESPACE', job.Namespace);
  set('NOMAD_REGION', job.Region);
  for (const port of input.ports) {
    const host = port.HostIP.includes(':') ? `[${port.HostIP}]:${port.Value}` : `${port.HostIP}:${port.Value}`;
    const inner = String(port.To > 0 ? port.To : port.Value);
    set(`NOMAD_ADDR_${port.Label}`, host);
    set(`NOMAD_HOST_ADDR_${port.Label}`, host);
    set(`NOMAD_IP_${port.Label}`, port.HostIP);
    set(`NOMAD_HOST_IP_${port.Label}`, port.HostIP);
    set(`NOMAD_PORT_${port.Label}`, inner);
    set(`NOMAD_ALLOC_PORT_${port.Label}`, inner);
    set(`NOMAD_HOST_PORT_${port.Label}`, String(port.Value));
  }
  // Meta: job, then group, then task (later wins), under the key as given and UPPERCASED.
  const meta = { ...(job.Meta ?? {}), ...(group.Meta ?? {}), ...(task?.Meta ?? {}) };
  for (const [key, value] of Object.entries(meta)) {
    set(`NOMAD_META_${key}`, String(value));
    set(`NOMAD_META_${key.toUpperCase()}`, String(value));
  }
  return env;
}

/** Node attributes a `${node.*}` / `${attr.*}` reference can read. */
export function nodeAttributes(input: EnvInput): Record<string, string> {
  const ip = input.ports[0]?.HostIP ?? '127.0.0.1';
  return {
    'node.unique.id': 'standin-node-0000-0000-000000000000',
    'node.unique.name': input.nodeName,
    'node.datacenter': input.datacenter,
    'node.region': input.job.Region,
    'node.class': '',
    'node.pool': 'default',
    'attr.unique.network.ip-address': ip,
    'attr.kernel.name': process.platform,
    'attr.unique.hostname': input.nodeName,
  };
}

/**
 * Nomad's interpolation (client/taskenv ReplaceEnv): `${NOMAD_X}` or any env key, `${env["X"]}`,
 * `${meta.key}`, `${node.*}`, `${attr.*}`. A reference that does not resolve is left as written.
 */
export function interpolate(text: string, env: Readonly<Record<string, string>>, node: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{([^}]+)\}/g, (whole, inner: string) => {
    const key = inner.trim();
    const envIndex = /^env\[\s*"([^"]+)"\s*\]$/.exec(key);
    if (envIndex) return env[envIndex[1]!] ?? whole;
    if (key.startsWith('meta.')) return env[`NOMAD_META_${key.slice(5)}`] ?? whole;
    if (key.startsWith('env.')) return env[key.slice(4)] ?? whole;
    if (key in node) return node[key]!;
    return env[key] ?? whole;
  });
}
