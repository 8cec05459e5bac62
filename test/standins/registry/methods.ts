/**
 * A method a route does not serve: 405 with `Allow`, answered as the
 * spec's UNSUPPORTED error. (distribution's gorilla MethodHandler writes a
 * plain-text `Method Not Allowed` instead; both are 405.)
 */
import type { Call } from './context.js';
import { RegistryError, sendErrors } from './errors.js';

export function methodNotAllowed(call: Call, allowed: readonly string[]): void {
  sendErrors(call.res, new RegistryError({ code: 'UNSUPPORTED' }, { Allow: allowed.join(', ') }));
}
