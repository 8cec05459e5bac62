/** Go `time.Duration` values as Nomad's JSON wants them: integer nanoseconds. */
export const SECOND = 1_000_000_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

export const seconds = (n: number): number => Math.round(n * SECOND);
