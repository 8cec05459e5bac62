/**
 * Per-workspace quotas the operator sets (config `workspaceQuotas`): at most this many containers, CPU
 * cores, MiB of memory and GPUs running at once, counted over every workload of the workspace. A deploy past
 * them is refused (403), a scale-up past them does not start the container, and traffic that would need
 * one gets 429 with Retry-After, each `quota_exceeded` naming the quota, its value and what is in use.
 */
import { SvcError } from './errors.js';

export interface WorkspaceQuota {
  readonly containers?: number;
  /** Cores, summed over the containers' `cpu`. */
  readonly cpu?: number;
  /** MiB, summed over the containers' `memory`. */
  readonly memoryMiB?: number;
  /** GPUs, summed over the containers' `gpu=` counts. */
  readonly gpus?: number;
}

/** By workspace name; `*` for every workspace the table does not name. */
export type QuotaTable = Readonly<Record<string, WorkspaceQuota>>;

/** Containers, cores, MiB and GPUs: what runs, or what a start adds. */
export interface QuotaUse {
  readonly containers: number;
  readonly cpu: number;
  readonly memoryMiB: number;
  readonly gpus: number;
}

export const QUOTA_KEYS = ['containers', 'cpu', 'memoryMiB', 'gpus'] as const;

export const NO_USE: QuotaUse = { containers: 0, cpu: 0, memoryMiB: 0, gpus: 0 };

/** What `count` containers of a workload with these resources take. */
export function useOf(
  resources: { readonly cpu: number; readonly memoryMiB: number; readonly gpu?: { readonly count: number } },
  count: number,
): QuotaUse {
  return {
    containers: count,
    cpu: count * resources.cpu,
    memoryMiB: count * resources.memoryMiB,
    gpus: count * (resources.gpu?.count ?? 0),
  };
}

/** `a` and `b` together. */
export function addUse(a: QuotaUse, b: QuotaUse): QuotaUse {
  return { containers: a.containers + b.containers, cpu: a.cpu + b.cpu, memoryMiB: a.memoryMiB + b.memoryMiB, gpus: a.gpus + b.gpus };
}

/**
 * `raw` as a quota, or what is wrong with it (`what` names it in the message): an object of QUOTA_KEYS,
 * each 0 or more, containers and memory whole.
 */
export function checkQuota(raw: unknown, what: string): WorkspaceQuota | { readonly problem: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { problem: `${what} is not an object of ${QUOTA_KEYS.join(', ')}` };
  for (const [key, value] of Object.entries(raw)) {
    if (!(QUOTA_KEYS as readonly string[]).includes(key))
      return { problem: `${what} has ${JSON.stringify(key)}: it takes ${QUOTA_KEYS.join(', ')}` };
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (key !== 'cpu' && !Number.isInteger(value))) {
      return {
        problem: `${what}.${key} must be ${key === 'cpu' ? 'a number of cores' : 'a whole number'}, 0 or more, got ${JSON.stringify(value)}`,
      };
    }
  }
  return raw as WorkspaceQuota;
}

export function quotaFor(table: QuotaTable, workspace: string): WorkspaceQuota | null {
  // Own keys only: a workspace named like an Object.prototype member (`constructor`) is not in the table.
  if (Object.hasOwn(table, workspace)) return table[workspace]!;
  return Object.hasOwn(table, '*') ? table['*']! : null;
}

/** How many more containers of `each` fit beside `used` (Infinity without a quota). */
export function containersThatFit(quota: WorkspaceQuota | null, used: QuotaUse, each: QuotaUse): number {
  if (quota === null) return Number.POSITIVE_INFINITY;
  let fit = Number.POSITIVE_INFINITY;
  for (const key of QUOTA_KEYS) {
    const limit = quota[key];
    if (limit === undefined || each[key] <= 0) continue;
    fit = Math.min(fit, Math.floor((limit - used[key] + 1e-9) / each[key]));
  }
  return Math.max(0, fit);
}

/** `quota_exceeded` for the first quota `adding` would pass, or null when it fits. */
export function quotaExceeded(
  workspace: string,
  quota: WorkspaceQuota | null,
  used: QuotaUse,
  adding: QuotaUse,
  traffic: boolean,
): SvcError | null {
  if (quota === null) return null;
  for (const key of QUOTA_KEYS) {
    const limit = quota[key];
    if (limit === undefined || used[key] + adding[key] <= limit + 1e-9) continue;
    const unit = key === 'cpu' ? ' cores' : key === 'memoryMiB' ? ' MiB' : '';
    const name = key === 'memoryMiB' ? 'memory' : key;
    const said = key === 'gpus' ? 'GPUs' : name;
    return new SvcError(
      'quota_exceeded',
      `the workspace ${workspace} may run ${limit}${unit} of ${said} at once; ${round(used[key])}${unit} run and this needs ${round(adding[key])}${unit} more.`,
      {
        hint: traffic
          ? 'Another workload of the workspace must scale down first; try again shortly, or ask the operator for a larger quota (workspaceQuotas).'
          : 'Stop or scale down other workloads of the workspace (svc deployment scale, svc deployment stop), or ask the operator for a larger quota (workspaceQuotas).',
        details: { quota: name, limit, inUse: used[key], adding: adding[key] },
        ...(traffic ? { status: 429, headers: { 'Retry-After': '5' } } : {}),
      },
    );
  }
  return null;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
