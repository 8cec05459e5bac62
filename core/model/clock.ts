/**
 * Time as the auth services see it: milliseconds since the epoch. Injected so
 * that tests move time forward instead of sleeping.
 */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** The ISO 8601 form stored in records (`2025-01-31T12:00:00.000Z`). */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}
