/**
 * What a secret may hold: its name follows svc's one naming rule; its keys
 * are environment variable names (not the ones svc's runtime sets itself);
 * its values are bounded in size and count. Messages name a key, never a value.
 */
import { SvcError } from '../../model/errors.js';
import { ENV_NAME_PATTERN, ENV_NAME_RULE, MAX_ENV_VALUE_BYTES, isReservedEnvName, reservedEnvText } from '../../model/env-names.js';
import { nameProblem } from '../../model/names.js';

export const MAX_KEYS = 100;
export const MAX_KEY_LENGTH = 256;
export const MAX_VALUE_BYTES = MAX_ENV_VALUE_BYTES;
export const MAX_TOTAL_BYTES = 128 * 1024;
export const KEY_RULE = ENV_NAME_RULE;

export function checkSecretName(name: unknown): string {
  const problem = nameProblem(name, 'secret');
  if (problem !== null) throw secretNameInvalid(name, problem);
  return name as string;
}

/** The `name_invalid` of a secret name that breaks the rule; `problem` says how (`nameProblem`). */
export function secretNameInvalid(name: unknown, problem: string): SvcError {
  return new SvcError('name_invalid', `the secret name ${JSON.stringify(name)} ${problem}.`, { details: { kind: 'secret', name } });
}

/** The values as given, checked: an object of string keys to string values. */
export function checkSecretValues(values: unknown, options: { readonly allowEmpty?: boolean } = {}): Record<string, string> {
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new SvcError('bad_request', 'values must be an object of KEY: "value" pairs.');
  }
  const entries = Object.entries(values);
  if (entries.length === 0 && !options.allowEmpty) throw new SvcError('bad_request', 'a secret needs at least one KEY=VALUE pair.');
  if (entries.length > MAX_KEYS)
    throw new SvcError('bad_request', `a secret holds at most ${MAX_KEYS} keys, got ${entries.length}.`, {
      hint: 'Split it into several secrets.',
    });
  let total = 0;
  for (const [key, value] of entries) {
    checkKeyName(key);
    if (typeof value !== 'string') throw new SvcError('bad_request', `the value of ${key} must be a string.`);
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > MAX_VALUE_BYTES)
      throw new SvcError('bad_request', `the value of ${key} is ${bytes} bytes; a value holds at most ${MAX_VALUE_BYTES}.`, {
        hint: 'Keep large data elsewhere and put its address in the secret.',
      });
    if (value.includes('\0'))
      throw new SvcError('bad_request', `the value of ${key} contains a NUL character, which no environment variable can hold.`);
    total += bytes;
  }
  if (total > MAX_TOTAL_BYTES)
    throw new SvcError('bad_request', `the values add up to ${total} bytes; a secret holds at most ${MAX_TOTAL_BYTES}.`, {
      hint: 'Split it into several secrets.',
    });
  return Object.fromEntries(entries) as Record<string, string>;
}

export function checkKeyName(key: string): void {
  if (key.length > MAX_KEY_LENGTH)
    throw new SvcError('bad_request', `the key ${JSON.stringify(key.slice(0, 40))}… is longer than ${MAX_KEY_LENGTH} characters.`);
  if (!ENV_NAME_PATTERN.test(key))
    throw new SvcError('bad_request', `the key ${JSON.stringify(key)} is not ${KEY_RULE}.`, { hint: 'For example DATABASE_URL.' });
  if (isReservedEnvName(key)) {
    throw new SvcError('bad_request', `the key ${key} is one svc sets in every worker itself (${reservedEnvText}).`, {
      hint: 'Choose another name.',
    });
  }
}
