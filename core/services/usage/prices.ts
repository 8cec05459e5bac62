/**
 * The operator's prices per unit of usage (config `usagePrices`): with them `svc usage`, the API and the
 * dashboard add a cost to each row. A price left out costs nothing; the currency is only a label.
 */
import type { UsageFigures } from './usage-meter.js';

export interface UsagePrices {
  /** An ISO 4217 code such as `USD`, shown beside each cost. */
  readonly currency: string;
  /** Per CPU second a container used. */
  readonly cpuSecond?: number;
  /** Per GiB of memory held for a second. */
  readonly memoryGiBSecond?: number;
  /** Per GPU held for a second. */
  readonly gpuSecond?: number;
}

/** The keys a price list takes besides `currency`, each a number of the currency per unit. */
export const PRICE_KEYS = ['cpuSecond', 'memoryGiBSecond', 'gpuSecond'] as const;

/** What `figures` cost, to a millionth of the currency (a fraction of a cent adds up over a month). */
export function costOf(figures: UsageFigures, prices: UsagePrices): number {
  const cost =
    figures.cpuSeconds * (prices.cpuSecond ?? 0) +
    figures.memoryGiBSeconds * (prices.memoryGiBSecond ?? 0) +
    figures.gpuSeconds * (prices.gpuSecond ?? 0);
  return Math.round(cost * 1e6) / 1e6;
}
