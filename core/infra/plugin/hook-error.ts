/**
 * Wrapping of errors thrown by plugin hooks: exactly once, naming the plugin
 * and the hook, so that users always learn which plugin failed.
 */
import { SvcError, isSvcError } from '../../model/errors.js';
import type { HookName } from './types.js';

/** Errors this module produced; a nested host call's error passes through unchanged. */
const wrapped = new WeakSet<SvcError>();

/** True when `error` already names the plugin and hook that threw it. */
export function isHookError(error: unknown): error is SvcError {
  return isSvcError(error) && wrapped.has(error);
}

/**
 * Turns anything a hook threw into an SvcError whose message starts with
 * `plugin "<name>" failed in hook "<hook>": ` and whose details hold
 * `{ plugin, hook }`. A deliberate SvcError keeps its code, status, hint and
 * headers (a refused deploy stays `forbidden`), with its own details moved to
 * `details.details`; anything else becomes `plugin_error`. The original is
 * kept as `cause`.
 */
export function wrapHookError(error: unknown, plugin: string, hook: HookName): SvcError {
  if (isHookError(error)) return error;
  const prefix = `plugin "${plugin}" failed in hook "${hook}": `;
  if (isSvcError(error)) {
    const details = error.details === undefined ? { plugin, hook } : { plugin, hook, details: error.details };
    return mark(
      new SvcError(error.code, prefix + error.message, {
        status: error.status,
        hint: error.hint,
        headers: error.headers,
        details,
        cause: error,
      }),
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return mark(new SvcError('plugin_error', prefix + message, { details: { plugin, hook }, cause: error }));
}

/** A `plugin_error` the host raises itself about a hook (for example a missing return value). */
export function hookError(plugin: string, hook: HookName, message: string, hint?: string): SvcError {
  const error = new SvcError('plugin_error', `plugin "${plugin}" failed in hook "${hook}": ${message}`, {
    details: { plugin, hook },
    hint,
  });
  return mark(error);
}

function mark(error: SvcError): SvcError {
  wrapped.add(error);
  return error;
}
