/**
 * `GET /api/v1/usage`: what the caller's workspace used (core/services/usage/usage-meter.ts): CPU seconds
 * and memory GiB-seconds, summed by workload, app or day over the last hours or days.
 */
import { SvcError } from '../../model/errors.js';
import { hourOf, usageHours } from '../../services/usage/usage-meter.js';
import { sumUsage, USAGE_GROUPINGS, type UsageGrouping } from '../../services/usage/summary.js';
import { answer, error, ref } from './openapi/shared.js';
import type { Parameter } from './openapi/types.js';
import type { ApiRoute } from './types.js';

const SINCE = /^(\d{1,5})(h|d)$/;
const BY = USAGE_GROUPINGS;

/** `bad_request` for a range it does not take; `keptDays` (usageRetentionDays) is the furthest back, when known. */
function sinceRefused(value: string | undefined, keptDays?: number): SvcError {
  const most = keptDays === undefined ? '' : ` (at most ${keptDays}d: this server keeps usage ${keptDays} days, usageRetentionDays)`;
  return new SvcError('bad_request', `since=${JSON.stringify(value)} is not a range: give hours or days, like 24h or 7d${most}.`, {
    hint: 'Leave it out for the last 7 days.',
    details: { field: 'since' },
  });
}

function byRefused(value: string | undefined): SvcError {
  return new SvcError('bad_request', `by=${JSON.stringify(value)} is not one of ${BY.join(', ')}.`, {
    hint: 'Leave it out to sum by workload.',
    details: { field: 'by' },
  });
}

/** The hours `text` names, from 1 to what the server keeps; null otherwise. */
function sinceHours(text: string, keptDays: number): number | null {
  const match = SINCE.exec(text);
  if (match === null) return null;
  const hours = Number(match[1]) * (match[2] === 'd' ? 24 : 1);
  return hours >= 1 && hours <= keptDays * 24 ? hours : null;
}

const PARAMETERS: Parameter[] = [
  {
    name: 'since',
    in: 'query',
    required: false,
    schema: { type: 'string', pattern: SINCE.source },
    description: 'How far back: `24h`, `7d` (the default), at most the days the server keeps usage (`usageRetentionDays`, 90 by default).',
    refusal: { code: 'bad_request', refuse: (value) => sinceRefused(value) },
  },
  {
    name: 'by',
    in: 'query',
    required: false,
    schema: { type: 'string', enum: [...BY] },
    description: 'Summed by `workload` (the default), `app` or `day`.',
    refusal: {
      code: 'bad_request',
      refuse: (value) => byRefused(value),
    },
  },
];

export const usageRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/usage',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getUsage',
      summary:
        "What the caller's workspace used: CPU seconds and memory GiB-seconds of its containers, by workload, app or day, with their cost where the operator set prices.",
      parameters: PARAMETERS,
      responses: { 200: answer('The figures.', ref('Usage')), 400: error('`bad_request`: a range or grouping it does not take.') },
    },
    async handle({ principal, query }, services) {
      // The parameters' check passes an empty value as absent; the schema takes none, and neither do these.
      const asked = query.get('since') ?? '7d';
      const hours = sinceHours(asked, services.usageRetentionDays);
      if (hours === null) throw sinceRefused(asked, services.usageRetentionDays);
      const by = (query.get('by') ?? 'workload') as UsageGrouping;
      if (!BY.includes(by)) throw byRefused(by);
      const since = hourOf(Date.now() - (hours - 1) * 3_600_000);
      const prices = services.usagePrices;
      const { rows, total } = sumUsage(await usageHours(services.controlPlane.store, principal.workspace, since), by, prices);
      return {
        status: 200,
        body: { since: `${since}:00:00Z`, by, rows, total, ...(prices === null ? {} : { currency: prices.currency }) },
      };
    },
  },
];
