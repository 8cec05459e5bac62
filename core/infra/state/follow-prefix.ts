/**
 * Keeps an in-memory copy of a key prefix up to date: waits for changes with
 * the store's blocking watch and reloads the copy after each one. A failure
 * (Consul unreachable, a bad record) is reported and retried after a pause,
 * by reading the prefix anew; only a closed store (svc stopping) or the
 * signal ends the loop. The token index, the route follower and the peer
 * load all follow their prefixes this way.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isStoreClosed } from './closed.js';
import type { StateStore } from '../../model/store/types.js';

export const RETRY_AFTER_ERROR_MS = 1000;

export interface FollowPrefixOptions {
  readonly store: StateStore;
  readonly prefix: string;
  readonly signal: AbortSignal;
  /** Re-reads the copy; returns the prefix's index read before listing (what the next watch waits from). */
  readonly reload: () => Promise<number>;
  readonly report: (error: unknown) => void;
  /** The index of a copy already loaded; absent: load first. */
  readonly since?: number;
  readonly retryMs?: number;
}

export async function followPrefix(options: FollowPrefixOptions): Promise<void> {
  const { store, prefix, signal } = options;
  let since = options.since ?? 0;
  let reload = options.since === undefined;
  while (!signal.aborted) {
    try {
      if (reload) {
        since = await options.reload();
        reload = false;
      }
      // An unchanged index: the wait ended with nothing new.
      reload = (await store.watch(prefix, since, { signal })) !== since;
    } catch (error) {
      if (signal.aborted) return;
      if (isStoreClosed(error)) return; // svc is stopping (Consul being unreachable is retried)
      options.report(error);
      reload = true;
      await sleep(options.retryMs ?? RETRY_AFTER_ERROR_MS, undefined, { signal }).catch(() => undefined);
    }
  }
}
