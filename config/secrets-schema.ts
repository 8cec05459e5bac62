/**
 * Where svc's secrets keys come from (core/services/secrets/key-source.ts): base64
 * keys in SVC_SECRETS_KEY (or the file SVC_SECRETS_KEY_FILE names, like every
 * password setting), or a 0600 file that the config file's `secretsKeyFile`
 * names. Neither: the embedded default makes `<data dir>/secrets.key`; a
 * Consul store refuses to start. docs/secrets.md and docs/configuration.md.
 */
import type { KeySettings } from '../core/services/secrets/key-source.js';

export type SecretsConfig = KeySettings;

export function secretsDefaults(): SecretsConfig {
  return { secretsKey: null, secretsKeyFile: null };
}

export const secretsKeys = {
  // A password: never in the config file; SVC_SECRETS_KEY_FILE names a file holding it.
  secretsKey: { env: 'SVC_SECRETS_KEY', kind: 'password' },
  secretsKeyFile: { env: null, kind: 'existingFile', what: 'a file of base64 secrets keys (0600)' },
} as const;
