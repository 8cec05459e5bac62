/**
 * `svc usage [--since 7d] [--by workload|app|day] [--json]`: what the workspace's containers used
 * (`GET /api/v1/usage`): CPU seconds and memory (held and reserved) from their cgroups, and the requests
 * their URLs answered with the bytes they moved, by workload, app or day, with their cost where the
 * operator set prices.
 */
import { formatBytes } from '../../core/model/format-bytes.js';
import type { UsageFigures as Figures } from '../../core/services/usage/figures.js';
import { API_PREFIX } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { formatTable } from '../table.js';

interface UsageFigures extends Figures {
  /** Present where the operator set prices (`usagePrices`), in `currency`. */
  readonly cost?: number;
}

interface UsageAnswer {
  readonly since: string;
  readonly by: string;
  readonly rows: readonly (UsageFigures & { readonly key: string })[];
  readonly total: UsageFigures;
  readonly currency?: string;
}

export interface UsageFlags {
  readonly since?: string;
  readonly by?: string;
  readonly json?: boolean;
}

export async function usage(context: CommandContext, flags: UsageFlags = {}): Promise<void> {
  const { out } = context;
  const { client } = await connect(context);
  const query = new URLSearchParams({ ...(flags.since ? { since: flags.since } : {}), ...(flags.by ? { by: flags.by } : {}) });
  const answer = await client.get<UsageAnswer>(`${API_PREFIX}/usage${query.size > 0 ? `?${query}` : ''}`);
  if (flags.json) return out.result(JSON.stringify(answer, null, 2));
  if (answer.rows.length === 0) return out.step(`no usage recorded since ${answer.since}`);
  const priced = answer.currency !== undefined;
  // GPU seconds only where some were used: most workspaces have none.
  const gpus = answer.total.gpuSeconds > 0;
  const rows = [...answer.rows, { key: 'total', ...answer.total }].map((row) => [
    row.key,
    row.cpuSeconds.toFixed(1),
    (row.memoryGiBSeconds / 3600).toFixed(3),
    (row.memoryReservedGiBSeconds / 3600).toFixed(3),
    String(row.requests),
    String(row.calls),
    formatBytes(row.bytesIn),
    formatBytes(row.bytesOut),
    ...(gpus ? [row.gpuSeconds.toFixed(1)] : []),
    ...(priced ? [(row.cost ?? 0).toFixed(4)] : []),
  ]);
  const header = [
    answer.by.toUpperCase(),
    'CPU SECONDS',
    'MEMORY GIB-HOURS',
    'RESERVED GIB-HOURS',
    'REQUESTS',
    'CALLS',
    'IN',
    'OUT',
    ...(gpus ? ['GPU SECONDS'] : []),
    ...(priced ? [`COST (${answer.currency})`] : []),
  ];
  for (const line of formatTable(header, rows, out.color)) out.result(line);
  out.step(`since ${answer.since}; CPU and memory from the containers' cgroups`);
}
