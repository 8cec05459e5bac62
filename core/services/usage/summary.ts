/** Usage hours summed the ways `svc usage`, the API and the dashboard show them: by workload, app or day. */
import { costOf, type UsagePrices } from './prices.js';
import { addUsage, NO_USAGE, type UsageFigures } from './figures.js';
import type { UsageHour } from './usage-meter.js';

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
      rows.set(key, addUsage(rows.get(key) ?? NO_USAGE, used));
    }
  }
  const listed = [...rows].map(([key, used]) => ({ key, ...used })).sort((a, b) => a.key.localeCompare(b.key));
  const total = listed.reduce<UsageFigures>((sum, row) => addUsage(sum, row), NO_USAGE);
  if (prices === null) return { rows: listed, total };
  const priced = <T extends UsageFigures>(figures: T): T & { cost: number } => ({ ...figures, cost: costOf(figures, prices) });
  return { rows: listed.map(priced), total: priced(total) };
}
