/**
 * JSON values on a StateStore: `putJson` stores `JSON.stringify(value)` as
 * UTF-8, `getJson` parses it and hands it to a validator, which returns the
 * typed value or throws. A stored value that is not JSON is `state_corrupt`.
 */
import { SvcError } from '../errors.js';
import type { CasOptions, StateStore } from './types.js';

export interface JsonEntry<T> {
  readonly key: string;
  readonly value: T;
  readonly createIndex: number;
  readonly modifyIndex: number;
}

/** Turns parsed JSON into a `T`, or throws (an SvcError, ideally) saying what is wrong. */
export type JsonValidator<T> = (value: unknown, key: string) => T;

export async function getJson<T>(store: StateStore, key: string, validate: JsonValidator<T>): Promise<JsonEntry<T> | null> {
  const entry = await store.get(key);
  if (entry === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(entry.value.toString('utf8'));
  } catch (error) {
    throw new SvcError('state_corrupt', `the state value of ${JSON.stringify(key)} is not valid JSON (${(error as Error).message})`, {
      details: { key },
      cause: error,
    });
  }
  return { key, value: validate(parsed, key), createIndex: entry.createIndex, modifyIndex: entry.modifyIndex };
}

/** Like `StateStore#put`, with the value as JSON. */
export async function putJson(store: StateStore, key: string, value: unknown, options?: CasOptions): Promise<boolean> {
  const text: string | undefined = JSON.stringify(value);
  if (text === undefined) throw new SvcError('internal', `cannot store ${typeof value} as JSON under ${JSON.stringify(key)}`);
  return store.put(key, text, options);
}
