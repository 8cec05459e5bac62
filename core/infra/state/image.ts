/**
 * The state in memory, and the records that change it. The same `apply` runs
 * when a log is replayed at open and when a committed batch is published, so
 * what a restart rebuilds is exactly what readers saw.
 */
import { compareKeys } from './key-rules.js';
import type { StateEntry } from '../../model/store/types.js';

/** One durable change; every record carries the store index it was written at. */
export type StateRecord =
  /**
   * Raises the store index to `index` without changing a key. Opens every log
   * file, and ends a compacted one (deletes advanced the index past the last put).
   */
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'put'; readonly index: number; readonly createIndex: number; readonly key: string; readonly value: Buffer }
  | { readonly kind: 'delete'; readonly index: number; readonly key: string }
  | { readonly kind: 'deleteTree'; readonly index: number; readonly prefix: string };

export class StateImage {
  readonly #entries = new Map<string, StateEntry>();
  #index: number;

  constructor(index = 1) {
    this.#index = index;
  }

  get index(): number {
    return this.#index;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The stored entry itself (not a copy: callers copy before handing it out). */
  peek(key: string): StateEntry | undefined {
    return this.#entries.get(key);
  }

  /** Entries whose key starts with `prefix`, sorted by key. */
  entriesUnder(prefix: string): StateEntry[] {
    const found: StateEntry[] = [];
    for (const entry of this.#entries.values()) if (entry.key.startsWith(prefix)) found.push(entry);
    return found.sort((a, b) => compareKeys(a.key, b.key));
  }

  /** True when some entry under `prefix` passes `test` (no sorting, no copies). */
  someUnder(prefix: string, test: (entry: StateEntry) => boolean): boolean {
    for (const entry of this.#entries.values()) if (entry.key.startsWith(prefix) && test(entry)) return true;
    return false;
  }

  /** Every entry, in no particular order (for compaction). */
  entries(): IterableIterator<StateEntry> {
    return this.#entries.values();
  }

  /**
   * Applies a record whose index is above the current one; returns the keys
   * it changed. Throws a plain Error describing what is inconsistent (the log
   * reader turns it into `state_corrupt` with the record's offset).
   */
  apply(record: StateRecord): string[] {
    if (record.kind === 'index') {
      if (record.index < 1 || record.index < this.#index)
        throw new Error(`index record ${record.index} lowers the store index ${this.#index}`);
      this.#index = record.index;
      return [];
    }
    if (record.index <= this.#index) throw new Error(`record index ${record.index} does not follow the store index ${this.#index}`);
    this.#index = record.index;
    switch (record.kind) {
      case 'put': {
        if (record.createIndex < 1 || record.createIndex > record.index)
          throw new Error(`create index ${record.createIndex} is outside 1..${record.index}`);
        this.#entries.set(record.key, { key: record.key, value: record.value, createIndex: record.createIndex, modifyIndex: record.index });
        return [record.key];
      }
      case 'delete':
        return this.#entries.delete(record.key) ? [record.key] : [];
      case 'deleteTree': {
        const removed = this.entriesUnder(record.prefix).map((entry) => entry.key);
        for (const key of removed) this.#entries.delete(key);
        return removed;
      }
    }
  }
}
