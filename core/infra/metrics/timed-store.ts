/**
 * A state store that times each call for `/metrics`
 * (`svc_state_store_duration_seconds`), blocking watches left out: they wait on purpose.
 */
import type { CasOptions, StateEntry, StateStore, WatchOptions } from '../../model/store/types.js';
import { timed, type PlatformMetrics } from './platform-metrics.js';

export function timedStore(store: StateStore, metrics: PlatformMetrics): StateStore {
  const time = <T>(operation: string, call: () => Promise<T>) => timed(call, (seconds, ok) => metrics.storeCall(operation, seconds, ok));
  return {
    // A store that orders writes queued together takes them in one batch (one fsync): say so through the wrapper too.
    ordersWrites: store.ordersWrites,
    get: (key: string): Promise<StateEntry | null> => time('get', () => store.get(key)),
    put: (key: string, value: Uint8Array | string, options?: CasOptions) => time('put', () => store.put(key, value, options)),
    list: (prefix: string) => time('list', () => store.list(prefix)),
    keys: (prefix: string, separator?: string) => time('keys', () => store.keys(prefix, separator)),
    delete: (key: string, options?: CasOptions) => time('delete', () => store.delete(key, options)),
    deleteTree: (prefix: string) => time('deleteTree', () => store.deleteTree(prefix)),
    index: () => time('index', () => store.index()),
    watch: (prefix: string, sinceIndex: number, options?: WatchOptions) => store.watch(prefix, sinceIndex, options),
    close: () => store.close(),
  };
}
