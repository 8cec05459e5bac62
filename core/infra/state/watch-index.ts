import type { StateStore } from '../../model/store/types.js';

/**
 * The index to watch `prefix` from, read before listing it. Not
 * `store.index()`: on Consul KV a prefix's index is the highest write under
 * it, which any later write elsewhere leaves behind, and a watch from the
 * store's index would then return at once every time: a reload loop. A
 * watch from index 0 returns at once with the prefix's own index.
 */
export function watchIndex(store: StateStore, prefix: string): Promise<number> {
  return store.watch(prefix, 0);
}
