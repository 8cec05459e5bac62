import type { Middleware } from 'koa';
import { respondError, type ErrorReporter } from './respond-error.js';
import type { GatewayState } from './types.js';

export type { ErrorReporter } from './respond-error.js';

/**
 * Koa's side of the one error writer (respond-error.ts): every failure of a
 * platform route or of the fallback becomes the JSON error shape.
 */
export function errorMiddleware(report: ErrorReporter): Middleware<GatewayState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      // The answer is written on the response itself, like the raw path's; Koa must not add its own.
      ctx.respond = false;
      respondError(ctx.res, thrown, ctx.state.requestId, report);
    }
  };
}
