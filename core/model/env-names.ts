/**
 * The environment variable names a user may set, through a secret or an
 * image's `env`: a portable name, and none that svc sets in every worker
 * itself (the SDK has the same rule: sdk/python/svc/_checks.py).
 */
export const ENV_NAME_RULE = 'an environment variable name: a letter or "_" first, then letters, digits and "_"';
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Set by svc for every worker: a user's variable must not replace them. */
export const RESERVED_ENV_NAMES: readonly string[] = Object.freeze([
  'PYTHONPATH',
  'PYTHONSAFEPATH',
  'PYTHONDONTWRITEBYTECODE',
  'PYTHONHOME',
  'VIRTUAL_ENV',
  'PATH',
]);
export const RESERVED_ENV_PREFIX = 'SVC_';
/** The largest value of one variable, in UTF-8 bytes. */
export const MAX_ENV_VALUE_BYTES = 32 * 1024;

/** Whether `name` is one svc sets itself (`SVC_*`, PYTHONPATH…). */
export function isReservedEnvName(name: string): boolean {
  return name.startsWith(RESERVED_ENV_PREFIX) || RESERVED_ENV_NAMES.includes(name);
}

/** `(SVC_*, PYTHONPATH, …)`: the names svc keeps for itself, for messages. */
export const reservedEnvText = `${RESERVED_ENV_PREFIX}*, ${RESERVED_ENV_NAMES.join(', ')}`;
