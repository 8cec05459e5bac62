import type { Middleware, ParameterizedContext } from 'koa';
import { SvcError } from '../../model/errors.js';
import type { GatewayState } from './types.js';

/**
 * RFC 9110 `Host = uri-host [ ":" port ]`: an IP literal or a reg-name. The
 * WHATWG parser alone accepts too much (`a/b`, `user@host`), so both check.
 */
const HOST_SYNTAX = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::[0-9]*)?$/;
const ABSOLUTE_FORM = /^https?:\/\//i;

/**
 * The request's URL, parsed once and kept on `ctx.state.url`. A malformed
 * Host header (or request target) is the client's mistake: `bad_request`,
 * never a 500 from `new URL` throwing deep inside a middleware.
 */
export function requestUrl(ctx: ParameterizedContext<GatewayState>): URL {
  ctx.state.url ??= parseRequestUrl(ctx.protocol, ctx.get('host'), ctx.originalUrl);
  return ctx.state.url;
}

export function parseRequestUrl(protocol: string, host: string, target: string): URL {
  if (host === '') throw new SvcError('bad_request', 'the request has no Host header.');
  if (!HOST_SYNTAX.test(host)) throw malformedHost();
  let origin: URL;
  try {
    // Also rejects what the syntax lets through: ports above 65535, bad IPv6 literals.
    origin = new URL(`${protocol}://${host}`);
  } catch {
    throw malformedHost();
  }
  try {
    // An absolute-form target (`GET http://x/y`) names its own authority (RFC 9112 §3.2.2).
    return ABSOLUTE_FORM.test(target) ? new URL(target) : new URL(`${origin.origin}${target}`);
  } catch {
    throw new SvcError('bad_request', 'the request target is malformed.');
  }
}

/** Checks the Host header before any route runs, so every path answers a bad one alike. */
export function hostMiddleware(): Middleware<GatewayState> {
  return async (ctx, next) => {
    requestUrl(ctx);
    await next();
  };
}

function malformedHost(): SvcError {
  return new SvcError('bad_request', 'the Host header is malformed.', {
    hint: 'Send the host name (and port) of the URL you called, e.g. "Host: 127.0.0.1:7420".',
  });
}
