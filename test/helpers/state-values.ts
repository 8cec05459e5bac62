/** The value the state writer (state-writer.ts) stores under a key: derived from the key, so a checker can recompute it. Sizes vary up to ~3 KiB. */
export function valueFor(key: string): string {
  const length = [...key].reduce((sum, c) => sum + c.charCodeAt(0) * 31, 0) % 3000;
  return `${key}|${'v'.repeat(length)}`;
}
