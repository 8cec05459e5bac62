/** Times in tables: `2030-01-31 12:00:00Z` (UTC, to the second); the ISO form stays in --json. */
export function shortTime(iso: string): string {
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return iso;
  return `${time.toISOString().slice(0, 19).replace('T', ' ')}Z`;
}
