/** Usage hours summed the ways `svc usage`, the API and the dashboard show them: by workload, app or day. */
import { costOf, type UsagePrices } from './prices.js';
import type { UsageFigures, UsageHour } from './usage-meter.js';

export const USAGE_GROUPINGS = ['workload', 'app', 'day'] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

export interface UsageRow extends UsageFigures {
  /** `<app>/<workload>`, the app, or the day (`YYYY-MM-DD`). */
  readonly key: string;
  /** What it cost at the operator's prices; absent without them. */
  readonly cost?: number;
}

export function sumUsage(
  hours: readonly { readonly hour: string; readonly figures: UsageHour }[],
  by: UsageGrouping,
  prices: UsagePrices | null = null,
): { rows: UsageRow[]; total: UsageFigures & { readonly cost?: number } } {
  const rows = new Map<string, UsageFigures>();
  for (const { hour, figures } of hours) {
    for (const [name, used] of Object.entries(figures)) {
      const key = by === 'day' ? hour.slice(0, 10) : by === 'app' ? name.split('/')[0]! : name;
      const before = rows.get(key) ?? { cpuSeconds: 0, memoryGiBSeconds: 0 };
      rows.set(key, { cpuSeconds: before.cpuSeconds + used.cpuSeconds, memoryGiBSeconds: before.memoryGiBSeconds + used.memoryGiBSeconds });
    }
  }
  const listed = [...rows].map(([key, used]) => ({ key, ...used })).sort((a, b) => a.key.localeCompare(b.key));
  const total = listed.reduce(
    (sum, row) => ({ cpuSeconds: sum.cpuSeconds + row.cpuSeconds, memoryGiBSeconds: sum.memoryGiBSeconds + row.memoryGiBSeconds }),
    {
      cpuSeconds: 0,
      memoryGiBSeconds: 0,
    },
  );
  if (prices === null) return { rows: listed, total };
  const priced = <T extends UsageFigures>(figures: T): T & { cost: number } => ({ ...figures, cost: costOf(figures, prices) });
  return { rows: listed.map(priced), total: priced(total) };
}
