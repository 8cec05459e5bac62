/**
 * Blocking queries: who waits on which prefix, and what changed when. Deleted
 * keys leave a tombstone (their delete index) so that a watch that starts
 * late still sees a delete it missed; when there are too many, they are
 * dropped and every older watch returns at once instead (a spurious return is
 * allowed, a missed change is not).
 */
import type { StateImage } from './image.js';
import { DEFAULT_WATCH_WAIT_MS, MAX_WATCH_WAIT_MS, type WatchOptions } from '../../model/store/types.js';

const MAX_TOMBSTONES = 10_000;

interface Waiter {
  readonly prefix: string;
  wake(index: number): void;
  fail(error: unknown): void;
}

export class Watchers {
  readonly #waiters = new Set<Waiter>();
  readonly #tombstones = new Map<string, number>();
  /** Changes at or below this index may have been forgotten (before open, or pruned tombstones). */
  #forgottenUpTo: number;

  constructor(forgottenUpTo: number) {
    this.#forgottenUpTo = forgottenUpTo;
  }

  /** Records what a committed batch changed and wakes the watches it concerns. */
  committed(image: StateImage, changedKeys: readonly string[]): void {
    if (changedKeys.length === 0) return;
    for (const key of changedKeys) {
      if (image.peek(key) === undefined) this.#tombstones.set(key, image.index);
      else this.#tombstones.delete(key);
    }
    if (this.#tombstones.size > MAX_TOMBSTONES) {
      this.#tombstones.clear();
      this.#forgottenUpTo = image.index;
    }
    for (const waiter of this.#waiters) {
      if (changedKeys.some((key) => key.startsWith(waiter.prefix))) waiter.wake(image.index);
    }
  }

  /** See `StateStore#watch`. */
  wait(image: StateImage, prefix: string, sinceIndex: number, options: WatchOptions): Promise<number> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (sinceIndex <= 0 || sinceIndex > image.index || this.#changedSince(image, prefix, sinceIndex)) return Promise.resolve(image.index);
    const waitMs = Math.min(Math.max(options.waitMs ?? DEFAULT_WATCH_WAIT_MS, 0), MAX_WATCH_WAIT_MS);
    return new Promise<number>((resolve, reject) => {
      const end = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#waiters.delete(waiter);
      };
      const waiter: Waiter = {
        prefix,
        wake: (index) => {
          end();
          resolve(index);
        },
        fail: (error) => {
          end();
          reject(error);
        },
      };
      const onAbort = (): void => waiter.fail(signal?.reason);
      // A pending watch must not keep the process alive on its own.
      const timer = setTimeout(() => waiter.wake(image.index), waitMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(waiter);
    });
  }

  /** Ends every pending watch with `error` (the store is closing). */
  failAll(error: unknown): void {
    for (const waiter of [...this.#waiters]) waiter.fail(error);
  }

  #changedSince(image: StateImage, prefix: string, sinceIndex: number): boolean {
    if (sinceIndex < this.#forgottenUpTo) return true;
    if (image.someUnder(prefix, (entry) => entry.modifyIndex > sinceIndex)) return true;
    for (const [key, index] of this.#tombstones) if (index > sinceIndex && key.startsWith(prefix)) return true;
    return false;
  }
}
