import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const VALID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A well-formed incoming `X-Request-Id` is kept (tracing across services); anything else is replaced. */
export function requestIdOf(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && VALID.test(incoming) ? incoming : randomUUID();
}

/** Passes a well-formed incoming `X-Request-Id` through, or makes one, and echoes it on the response. */
export function requestIdMiddleware(): Middleware {
  return async (ctx, next) => {
    const id = requestIdOf(ctx.get('x-request-id'));
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
