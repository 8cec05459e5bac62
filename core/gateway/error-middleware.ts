import type { Middleware } from 'koa';
import { errorBody, toSvcError } from '../errors.js';

export type ErrorReporter = (error: unknown, context: { method: string; path: string; requestId: string | undefined }) => void;

/**
 * The one place HTTP errors are shaped: every failure becomes
 * `{"error": {"code", "message"}}` with the code's status and headers.
 * Errors whose message is hidden from clients (bugs, plugin failures) are reported.
 */
export function errorMiddleware(report: ErrorReporter): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      const error = toSvcError(thrown);
      if (!error.expose) report(thrown, { method: ctx.method, path: ctx.path, requestId: ctx.state.requestId });
      if (ctx.headerSent || !ctx.writable) return;
      ctx.status = error.status;
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      ctx.body = errorBody(error);
    }
  };
}
