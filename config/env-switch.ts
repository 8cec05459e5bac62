/**
 * On/off switches read from the environment (SVC_ZYGOTES, SVC_SERVE_WARM,
 * SVC_SERVE_TIMINGS): `1` on, `0` off, unset or empty the default, anything
 * else `config_invalid`, so that a typo never silently leaves the default in place.
 */
import { SvcError } from '../core/model/errors.js';

export interface EnvSwitch {
  /** The variable's name, e.g. `SVC_ZYGOTES`. */
  readonly name: string;
  readonly fallback: boolean;
  /** What `0` and `1` do, for the error's hint. */
  readonly off: string;
  readonly on: string;
}

export function envSwitch(variable: EnvSwitch, raw: string | undefined = process.env[variable.name]): boolean {
  const value = raw?.trim() ?? '';
  if (value === '') return variable.fallback;
  if (value === '1') return true;
  if (value === '0') return false;
  throw new SvcError('config_invalid', `${variable.name} must be 0 or 1, got ${JSON.stringify(raw)}`, {
    hint: `Set ${variable.name}=0 to ${variable.off}, or ${variable.name}=1 to ${variable.on} (unset: ${variable.fallback ? 1 : 0}).`,
  });
}
