/** Work on many items, a few at a time (the files of a folder put or fetched). */

/**
 * Runs `work` on each item, at most `limit` at once, in the items' order of starting; the first failure
 * stops new ones from starting and is thrown once those running have ended.
 */
export async function eachAtOnce<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { readonly error: unknown } | null = null;
  const lane = async () => {
    while (failure === null && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== null) throw (failure as { readonly error: unknown }).error;
}
