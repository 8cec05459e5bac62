/**
 * The StateStore semantics over an in-memory image and a pluggable
 * persistence. Reads are served from memory. Writes go through one queue:
 * whatever queued while the previous batch was being made durable becomes the
 * next batch (group commit: one fsync for many writers), planned against the
 * committed state, written, and only then published to readers and watchers —
 * so nobody ever reads a write that a crash could still take back.
 */
import { storeClosedError } from './closed.js';
import { isSvcError, SvcError, toSvcError } from '../../model/errors.js';
import type { StateImage, StateRecord } from './image.js';
import { checkCas, checkKey, checkPrefix, foldKeys, valueBytes } from './key-rules.js';
import { planBatch, type Mutation } from './planner.js';
import type { CasOptions, StateEntry, StateStore, WatchOptions } from '../../model/store/types.js';
import { Watchers } from './watchers.js';

/** Where committed records go. */
export interface Persistence {
  /** Makes `records` durable; resolves only when they would survive a crash. */
  write(records: readonly StateRecord[]): Promise<void>;
  /** Runs between batches with nothing in flight (the file store compacts its log here). */
  afterCommit(image: StateImage): Promise<void>;
  close(): Promise<void>;
}

interface Pending {
  readonly mutation: Mutation;
  resolve(result: boolean): void;
  reject(error: unknown): void;
}

export class KvStore implements StateStore {
  /** Writes queued together go into one batch, in the order they were queued (#drainQueue). */
  readonly ordersWrites = true;
  readonly #image: StateImage;
  readonly #persistence: Persistence;
  readonly #watchers: Watchers;
  #queue: Pending[] = [];
  #drain: Promise<void> | null = null;
  #closed = false;
  /** Set once a write failed: the log's state on disk is unknown, so no further write is accepted. */
  #failure: SvcError | null = null;

  constructor(image: StateImage, persistence: Persistence) {
    this.#image = image;
    this.#persistence = persistence;
    this.#watchers = new Watchers(image.index);
  }

  async get(key: string): Promise<StateEntry | null> {
    checkKey(key);
    this.#checkOpen();
    const entry = this.#image.peek(key);
    return entry === undefined ? null : copy(entry);
  }

  async list(prefix: string): Promise<StateEntry[]> {
    checkPrefix(prefix);
    this.#checkOpen();
    return this.#image.entriesUnder(prefix).map(copy);
  }

  async keys(prefix: string, separator?: string): Promise<string[]> {
    checkPrefix(prefix);
    this.#checkOpen();
    return foldKeys(
      this.#image.entriesUnder(prefix).map((entry) => entry.key),
      prefix,
      separator,
    );
  }

  async index(): Promise<number> {
    this.#checkOpen();
    return this.#image.index;
  }

  async put(key: string, value: Uint8Array | string, options: CasOptions = {}): Promise<boolean> {
    checkKey(key);
    checkCas(key, options.cas);
    return this.#enqueue({ kind: 'put', key, value: valueBytes(key, value), cas: options.cas });
  }

  async delete(key: string, options: CasOptions = {}): Promise<boolean> {
    checkKey(key);
    checkCas(key, options.cas);
    return this.#enqueue({ kind: 'delete', key, cas: options.cas });
  }

  async deleteTree(prefix: string): Promise<void> {
    checkPrefix(prefix);
    await this.#enqueue({ kind: 'deleteTree', prefix });
  }

  async watch(prefix: string, sinceIndex: number, options: WatchOptions = {}): Promise<number> {
    checkPrefix(prefix);
    if (!Number.isSafeInteger(sinceIndex) || sinceIndex < 0)
      throw new SvcError('bad_request', `a watch index must be a non-negative integer, not ${String(sinceIndex)}`);
    this.#checkOpen();
    return this.#watchers.wait(this.#image, prefix, sinceIndex, options);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Writes already queued were accepted: let them finish before the log closes.
    while (this.#drain !== null) await this.#drain;
    this.#watchers.failAll(storeClosedError());
    await this.#persistence.close();
  }

  #checkOpen(): void {
    if (this.#closed) throw storeClosedError();
  }

  #enqueue(mutation: Mutation): Promise<boolean> {
    this.#checkOpen();
    if (this.#failure !== null) throw this.#failure;
    return new Promise<boolean>((resolve, reject) => {
      this.#queue.push({ mutation, resolve, reject });
      this.#startDrain();
    });
  }

  #startDrain(): void {
    if (this.#drain !== null) return;
    // The first batch starts after the current task's synchronous part, so that writes queued
    // together (a call's input and its record) share one batch: one fsync, not two in a row.
    this.#drain = Promise.resolve()
      .then(() => this.#drainQueue())
      .finally(() => {
        this.#drain = null;
        // Something may have queued after the loop's last look.
        if (this.#queue.length > 0) this.#startDrain();
      });
  }

  async #drainQueue(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      if (this.#failure !== null) {
        for (const pending of batch) pending.reject(this.#failure);
        continue;
      }
      try {
        const plan = planBatch(
          this.#image,
          batch.map((pending) => pending.mutation),
        );
        if (plan.records.length > 0) await this.#persistence.write(plan.records);
        const changed = plan.records.flatMap((record) => this.#image.apply(record));
        this.#watchers.committed(this.#image, changed);
        batch.forEach((pending, i) => {
          pending.resolve(plan.results[i]!);
        });
      } catch (error) {
        // A full disk refused the batch and the log is as before it (log-file.ts): only this batch fails.
        if (isSvcError(error) && error.code === 'disk_full') {
          for (const pending of batch) pending.reject(error);
          continue;
        }
        this.#failure = writeFailed(error);
        for (const pending of batch) pending.reject(this.#failure);
        continue;
      }
      try {
        await this.#persistence.afterCommit(this.#image);
      } catch (error) {
        this.#failure = writeFailed(error);
      }
    }
  }
}

function copy(entry: StateEntry): StateEntry {
  return { key: entry.key, value: Buffer.from(entry.value), createIndex: entry.createIndex, modifyIndex: entry.modifyIndex };
}

function writeFailed(error: unknown): SvcError {
  if (error instanceof SvcError && error.code === 'state_unavailable') return error;
  const cause = toSvcError(error);
  return new SvcError(
    'state_unavailable',
    `the state store could not write its log (${cause.message}); it takes no more writes until svc restarts`,
    {
      hint: 'Fix the disk (or make it writable), then restart svc. Writes acknowledged before this one are safe.',
      cause: error,
    },
  );
}
