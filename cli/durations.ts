/**
 * Durations and times on the command line: `30s`, `15m`, `12h`, `7d`, `2w`
 * and sums of them (`1h30m`); and `--since`, which takes a duration (that
 * long ago) or an ISO 8601 time.
 */
import { SvcError } from '../core/model/errors.js';

const UNITS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Milliseconds of `30d`, `1h30m`…; `usage_invalid` naming `option` for anything else. */
export function parseDuration(text: string, option: string): number {
  const value = text.trim().toLowerCase();
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)([smhdw])/g)];
  const joined = parts.map((p) => p[0]).join('');
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]!]!, 0);
  if (value === '' || joined !== value || !(ms > 0) || !Number.isFinite(ms)) {
    throw new SvcError('usage_invalid', `${option} takes a duration such as 30s, 15m, 12h, 7d or 1h30m, got ${JSON.stringify(text)}.`, {
      hint: 'Units: s (seconds), m (minutes), h (hours), d (days), w (weeks).',
    });
  }
  return ms;
}

/** An ISO 8601 date-time with a time zone (or a date), as a Date; null when `text` is not one. */
export function parseIsoTime(text: string): Date | null {
  const value = text.trim();
  if (!/^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2}))?$/.test(value)) return null;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? null : time;
}

/** `--since`: a duration before `now`, or an ISO time. */
export function parseSince(text: string, now: number = Date.now()): Date {
  const time = parseIsoTime(text);
  if (time !== null) return time;
  try {
    return new Date(now - parseDuration(text, '--since'));
  } catch {
    throw new SvcError(
      'usage_invalid',
      `--since takes a duration (10m, 2h, 1d) or an ISO 8601 time (2030-01-31T12:00:00Z), got ${JSON.stringify(text)}.`,
      {
        hint: 'A duration means that long ago; a time needs its zone (Z or +01:00).',
      },
    );
  }
}
