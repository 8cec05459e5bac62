/**
 * Turns a batch of queued mutations into records, deciding each
 * compare-and-set against the committed state plus the earlier mutations of
 * the same batch. Batches are planned one at a time, so CAS is exact.
 */
import type { StateImage, StateRecord } from './image.js';

export type Mutation =
  | { readonly kind: 'put'; readonly key: string; readonly value: Buffer; readonly cas: number | undefined }
  | { readonly kind: 'delete'; readonly key: string; readonly cas: number | undefined }
  | { readonly kind: 'deleteTree'; readonly prefix: string };

export interface Plan {
  /** What to write, in order; mutations that change nothing write nothing. */
  readonly records: StateRecord[];
  /** One result per mutation, in order: what put/delete resolve with. */
  readonly results: boolean[];
}

interface Version {
  readonly createIndex: number;
  readonly modifyIndex: number;
}

export function planBatch(image: StateImage, mutations: readonly Mutation[]): Plan {
  // What this batch did so far: a version, or null for a key it deleted.
  const overlay = new Map<string, Version | null>();
  const current = (key: string): Version | null => {
    const planned = overlay.get(key);
    return planned !== undefined ? planned : (image.peek(key) ?? null);
  };
  const records: StateRecord[] = [];
  const results: boolean[] = [];
  let index = image.index;

  for (const mutation of mutations) {
    if (mutation.kind === 'put') {
      const existing = current(mutation.key);
      if (!casMatches(existing, mutation.cas)) {
        results.push(false);
        continue;
      }
      index += 1;
      const createIndex = existing?.createIndex ?? index;
      records.push({ kind: 'put', index, createIndex, key: mutation.key, value: mutation.value });
      overlay.set(mutation.key, { createIndex, modifyIndex: index });
      results.push(true);
    } else if (mutation.kind === 'delete') {
      const existing = current(mutation.key);
      // Consul: deleting an absent key succeeds, with or without cas.
      if (existing === null) {
        results.push(true);
        continue;
      }
      if (!casMatches(existing, mutation.cas)) {
        results.push(false);
        continue;
      }
      index += 1;
      records.push({ kind: 'delete', index, key: mutation.key });
      overlay.set(mutation.key, null);
      results.push(true);
    } else {
      const doomed = new Set(image.entriesUnder(mutation.prefix).map((entry) => entry.key));
      for (const [key, version] of overlay) {
        if (!key.startsWith(mutation.prefix)) continue;
        if (version === null) doomed.delete(key);
        else doomed.add(key);
      }
      results.push(true);
      if (doomed.size === 0) continue;
      index += 1;
      records.push({ kind: 'deleteTree', index, prefix: mutation.prefix });
      for (const key of doomed) overlay.set(key, null);
    }
  }
  return { records, results };
}

function casMatches(existing: Version | null, cas: number | undefined): boolean {
  if (cas === undefined) return true;
  if (cas === 0) return existing === null;
  return existing !== null && existing.modifyIndex === cas;
}
