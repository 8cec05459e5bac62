/** A state store that fails on demand the way a Consul KV store fails while Consul is unreachable. */
import { SvcError } from '../../../../core/model/errors.js';
import type { CasOptions, StateStore, WatchOptions } from '../../../../core/model/store/types.js';

/** A store whose next `failPuts` puts (`failLists` lists) throw, to see publisher and follower recover. */
export class FlakyStore implements StateStore {
  failPuts = 0;
  failLists = 0;
  puts = 0;
  constructor(readonly inner: StateStore) {}
  get(key: string) {
    return this.inner.get(key);
  }
  async put(key: string, value: Uint8Array | string, options?: CasOptions) {
    this.puts++;
    if (this.failPuts > 0) {
      this.failPuts--;
      throw new SvcError('state_unavailable', 'svc could not reach Consul at http://127.0.0.1:8500 for its state (ECONNREFUSED)');
    }
    return this.inner.put(key, value, options);
  }
  async list(prefix: string) {
    if (this.failLists > 0) {
      this.failLists--;
      throw new SvcError('state_unavailable', 'svc could not reach Consul at http://127.0.0.1:8500 for its state (ECONNREFUSED)');
    }
    return this.inner.list(prefix);
  }
  keys(prefix: string, separator?: string) {
    return this.inner.keys(prefix, separator);
  }
  delete(key: string, options?: CasOptions) {
    return this.inner.delete(key, options);
  }
  deleteTree(prefix: string) {
    return this.inner.deleteTree(prefix);
  }
  index() {
    return this.inner.index();
  }
  watch(prefix: string, sinceIndex: number, options?: WatchOptions) {
    return this.inner.watch(prefix, sinceIndex, options);
  }
  close() {
    return this.inner.close();
  }
}
