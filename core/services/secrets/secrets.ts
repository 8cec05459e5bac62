/**
 * The secrets of each workspace in the state store, under
 * `secrets/<workspace>/<name>`, every value sealed with the server's keyring
 * (keyring.ts) for exactly that workspace, secret and key. Nothing here
 * returns a value but `environment`, which only the scheduler's side calls to
 * start workers; errors name secrets and keys, never values.
 */
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import { storedJson, storedObject, storedString, storedStringOrNull } from '../../model/store/stored-fields.js';
import { SvcError } from '../../model/errors.js';
import type { Principal } from '../../model/principal.js';
import { getJson, putJson, type JsonEntry } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import type { KeySource } from './key-source.js';
import { Keyring } from './keyring.js';
import { INLINE_SECRET_REF as INLINE_REF } from '../../model/workload/rules.js';
import { checkSecretName, checkSecretValues } from './rules.js';
import type { InlineScope, SecretEnvironment, SecretRecord, SecretView } from './types.js';

const PREFIX = 'secrets/';
/** Inline values of apps (`svc.Secret.from_dict`): `secrets-inline/<workspace>/<app>/<stage>/<i>`, out of the named secrets' way. */
const INLINE_PREFIX = 'secrets-inline/';
export { INLINE_SECRET_REF as INLINE_REF } from '../../model/workload/rules.js';

function inlinePrefix(scope: InlineScope): string {
  return `${INLINE_PREFIX}${scope.workspace}/${scope.app}/${scope.stage}/`;
}

export function secretKey(workspace: string, name: string): string {
  return `${PREFIX}${workspace}/${name}`;
}

/** What ties a sealed value to its place: moved to another workspace, secret or key, it no longer opens. */
function aad(workspace: string, name: string, key: string): string {
  return `svc secret\0${workspace}\0${name}\0${key}`;
}

export function secretNotFound(workspace: string, missing: readonly string[], status?: number): SvcError {
  const names = missing.map((name) => JSON.stringify(name)).join(', ');
  return new SvcError('secret_not_found', `the workspace ${workspace} has no secret ${names}.`, {
    hint: `Create it first: svc secret create ${missing[0]} KEY=VALUE …; svc secret list shows the workspace's secrets.`,
    details: { secrets: missing },
    ...(status === undefined ? {} : { status }),
  });
}

export class Secrets implements SecretEnvironment {
  readonly #store: StateStore;
  readonly #keys: KeySource;
  readonly #clock: Clock;

  constructor(store: StateStore, keys: KeySource, clock: Clock = systemClock) {
    this.#store = store;
    this.#keys = keys;
    this.#clock = clock;
  }

  async list(workspace: string): Promise<SecretView[]> {
    const entries = await this.#store.list(`${PREFIX}${workspace}/`);
    return entries.map((entry) => view(storedJson(entry, validRecord))).sort((a, b) => a.name.localeCompare(b.name));
  }

  async get(workspace: string, name: string): Promise<SecretView | null> {
    checkSecretName(name);
    const entry = await this.#read(workspace, name);
    return entry === null ? null : view(entry.value);
  }

  /** A new secret; `conflict` when the name is taken, unless `replace` (then its keys are exactly these). */
  async create(
    workspace: string,
    name: string,
    values: unknown,
    principal: Principal | null,
    options: { readonly replace?: boolean } = {},
  ): Promise<SecretView> {
    checkSecretName(name);
    const checked = checkSecretValues(values);
    const ring = await this.#keys('seal');
    const existing = await this.#read(workspace, name);
    if (existing !== null && !options.replace) {
      throw new SvcError('conflict', `the workspace ${workspace} already has a secret ${name}.`, {
        hint: `Change its keys with svc secret set ${name} KEY=VALUE, or replace it whole with svc secret create ${name} --replace.`,
      });
    }
    const now = isoAt(this.#clock());
    const by = principal?.subject ?? null;
    const record: SecretRecord = {
      name,
      workspace,
      keys: Object.keys(checked).sort(),
      sealed: sealAll(ring, workspace, name, checked),
      createdAt: existing?.value.createdAt ?? now,
      createdBy: existing?.value.createdBy ?? by,
      updatedAt: now,
      updatedBy: by,
    };
    if (!(await putJson(this.#store, secretKey(workspace, name), record, { cas: existing?.modifyIndex ?? 0 })))
      throw changedMeanwhile(name);
    return view(record);
  }

  /** Sets some keys of an existing secret (the others keep their values) and removes `remove`. */
  async set(
    workspace: string,
    name: string,
    values: unknown,
    principal: Principal | null,
    remove: readonly string[] = [],
  ): Promise<SecretView> {
    checkSecretName(name);
    const checked = checkSecretValues(values, { allowEmpty: remove.length > 0 });
    const ring = await this.#keys('seal');
    const existing = await this.#read(workspace, name);
    if (existing === null) throw secretNotFound(workspace, [name]);
    for (const key of remove) {
      if (!Object.hasOwn(existing.value.sealed, key))
        throw new SvcError(
          'bad_request',
          `the secret ${name} has no key ${JSON.stringify(key)} to remove; it has ${existing.value.keys.join(', ')}.`,
        );
      // Set and removed at once, the new value would be dropped without a word.
      if (Object.hasOwn(checked, key))
        throw new SvcError('bad_request', `the key ${key} is both set and removed; do one or the other.`, {
          details: { field: 'remove', key },
        });
    }
    const sealed = { ...existing.value.sealed, ...sealAll(ring, workspace, name, checked) };
    for (const key of remove) delete sealed[key];
    if (Object.keys(sealed).length === 0)
      throw new SvcError('bad_request', `the secret ${name} would have no key left.`, {
        hint: `Delete it instead: svc secret delete ${name}.`,
      });
    // The whole secret's bounds, over the values it would hold: opened only to count them.
    checkSecretValues(openAll(ring, workspace, name, sealed));
    const record: SecretRecord = {
      ...existing.value,
      keys: Object.keys(sealed).sort(),
      sealed,
      updatedAt: isoAt(this.#clock()),
      updatedBy: principal?.subject ?? null,
    };
    if (!(await putJson(this.#store, secretKey(workspace, name), record, { cas: existing.modifyIndex }))) throw changedMeanwhile(name);
    return view(record);
  }

  async delete(workspace: string, name: string): Promise<void> {
    checkSecretName(name);
    const existing = await this.#read(workspace, name);
    if (existing === null) throw secretNotFound(workspace, [name]);
    if (!(await this.#store.delete(secretKey(workspace, name), { cas: existing.modifyIndex }))) throw changedMeanwhile(name);
  }

  async check(workspace: string, names: readonly string[]): Promise<void> {
    const missing: string[] = [];
    for (const name of new Set(names)) if (!INLINE_REF.test(name) && (await this.#read(workspace, name)) === null) missing.push(name);
    if (missing.length > 0) throw secretNotFound(workspace, missing, 422);
  }

  async environment(scope: InlineScope, names: readonly string[]): Promise<Record<string, string>> {
    if (names.length === 0) return {};
    await this.check(scope.workspace, names);
    const ring = await this.#keys('open');
    const env: Record<string, string> = {};
    for (const name of names) {
      const inline = INLINE_REF.exec(name);
      const [key, workspace, secret] =
        inline === null
          ? [secretKey(scope.workspace, name), scope.workspace, name]
          : [`${inlinePrefix(scope)}${inline[1]}`, scope.workspace, inlineName(scope, inline[1]!)];
      const entry = await getJson(this.#store, key, validRecord);
      if (entry === null)
        throw inline === null
          ? secretNotFound(workspace, [name], 422)
          : new SvcError('secret_not_found', `the inline secret ${name} of ${scope.app} is no longer stored; deploy the app again.`, {
              status: 422,
            });
      Object.assign(env, openAll(ring, workspace, secret, entry.value.sealed));
    }
    return env;
  }

  async putInline(scope: InlineScope, values: readonly Readonly<Record<string, string>>[]): Promise<void> {
    const prefix = inlinePrefix(scope);
    if (values.length === 0) {
      await this.#store.deleteTree(prefix);
      return;
    }
    const ring = await this.#keys('seal');
    const now = isoAt(this.#clock());
    for (const [index, given] of values.entries()) {
      const name = inlineName(scope, String(index));
      const checked = checkSecretValues(given, { allowEmpty: true });
      const record: SecretRecord = {
        name,
        workspace: scope.workspace,
        keys: Object.keys(checked).sort(),
        sealed: sealAll(ring, scope.workspace, name, checked),
        createdAt: now,
        createdBy: null,
        updatedAt: now,
        updatedBy: null,
      };
      await putJson(this.#store, `${prefix}${index}`, record);
    }
    // Entries past this deploy's: an earlier deploy had more.
    for (const key of await this.#store.keys(prefix)) if (Number(key.slice(prefix.length)) >= values.length) await this.#store.delete(key);
  }

  async forgetInline(scope: InlineScope): Promise<void> {
    await this.#store.deleteTree(inlinePrefix(scope));
  }

  /**
   * Seals every value of every workspace again with the keyring's first key
   * (after a rotation, so that the old key can go). Returns how many values
   * were sealed again; values already under the first key are left alone.
   */
  async reseal(): Promise<{ readonly secrets: number; readonly values: number }> {
    const entries = [...(await this.#store.list(PREFIX)), ...(await this.#store.list(INLINE_PREFIX))];
    // Nothing stored, nothing to seal: no key is needed (a server that never stored a secret has none yet).
    if (entries.length === 0) return { secrets: 0, values: 0 };
    const ring = await this.#keys('open');
    let secrets = 0;
    let values = 0;
    for (const entry of entries) {
      const record = storedJson(entry, validRecord);
      const stale = Object.keys(record.sealed).filter((key) => Keyring.keyIdOf(record.sealed[key]!) !== ring.currentId);
      if (stale.length === 0) continue;
      const sealed = { ...record.sealed };
      for (const key of stale)
        sealed[key] = ring.seal(ring.open(sealed[key]!, aad(record.workspace, record.name, key)), aad(record.workspace, record.name, key));
      if (!(await putJson(this.#store, entry.key, { ...record, sealed }, { cas: entry.modifyIndex }))) {
        throw new SvcError(
          'conflict',
          `the secret ${record.name} of ${record.workspace} changed while it was sealed again; run the command again.`,
        );
      }
      secrets += 1;
      values += stale.length;
    }
    return { secrets, values };
  }

  async #read(workspace: string, name: string): Promise<JsonEntry<SecretRecord> | null> {
    return getJson(this.#store, secretKey(workspace, name), validRecord);
  }
}

/** A compare-and-set lost to another change of the same secret. */
function changedMeanwhile(name: string): SvcError {
  return new SvcError('conflict', `the secret ${name} changed meanwhile; try again.`);
}

/** The name an inline value is sealed under (its AAD): no named secret can have it. */
function inlineName(scope: InlineScope, index: string): string {
  return `@${scope.app}/${scope.stage}/${index}`;
}

function sealAll(ring: Keyring, workspace: string, name: string, values: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, ring.seal(value, aad(workspace, name, key))]));
}

function openAll(ring: Keyring, workspace: string, name: string, sealed: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(sealed).map(([key, value]) => [key, ring.open(value, aad(workspace, name, key))]));
}

function view(record: SecretRecord): SecretView {
  const { name, keys, createdAt, createdBy, updatedAt, updatedBy } = record;
  return { name, keys: [...keys], createdAt, createdBy, updatedAt, updatedBy };
}

function validRecord(value: unknown, key: string): SecretRecord {
  const record = storedObject(value, key);
  const sealed = storedObject(record.sealed, key);
  for (const field of Object.keys(sealed)) storedString(sealed, field, key);
  return {
    name: storedString(record, 'name', key),
    workspace: storedString(record, 'workspace', key),
    keys: Object.keys(sealed).sort(),
    sealed: sealed as Record<string, string>,
    createdAt: storedString(record, 'createdAt', key),
    createdBy: storedStringOrNull(record, 'createdBy', key),
    updatedAt: storedString(record, 'updatedAt', key),
    updatedBy: storedStringOrNull(record, 'updatedBy', key),
  };
}
