/** Memory sizes as the SDK writes them: "<integer>Mi" or "<integer>Gi", without leading zeros. */

const memoryPattern = /^([1-9]\d*)(Mi|Gi)$/;

/** The size in MiB ("2Gi" → 2048), or null when the text is not in that format. */
export function parseMemoryMiB(text: string): number | null {
  const match = memoryPattern.exec(text);
  if (match === null) return null;
  const amount = Number(match[1]);
  if (!Number.isSafeInteger(amount)) return null;
  return match[2] === 'Gi' ? amount * 1024 : amount;
}

/** The short form of a size in MiB: whole GiB as "Gi", else "Mi". */
export function formatMemoryMiB(mib: number): string {
  return mib % 1024 === 0 ? `${mib / 1024}Gi` : `${mib}Mi`;
}
