import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const VALID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Passes a well-formed incoming `X-Request-Id` through, or makes one, and echoes it on the response. */
export function requestIdMiddleware(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = VALID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
