/**
 * A state store that keeps everything in memory and loses it on exit: the
 * same semantics as the file store, for tests of code built on a StateStore.
 */
import { StateImage } from './image.js';
import { KvStore } from './kv-store.js';

export function createMemoryStateStore(): KvStore {
  return new KvStore(new StateImage(), {
    write: async () => {},
    afterCommit: async () => {},
    close: async () => {},
  });
}
