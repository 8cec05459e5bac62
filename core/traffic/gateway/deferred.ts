/**
 * `Prefer: respond-async` (RFC 7240) on a workload URL: the gateway checks the
 * request as for any other (Host, size, access, route and method), keeps it as a
 * call (CallService.defer) and answers `202 Accepted` with the call's `Location`
 * at once; the leader sends it later to the same URL through this gateway, marked
 * with a secret of this process's so that its access is not checked twice, and
 * keeps the answer as the call's outcome.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'undici';
import { SvcError } from '../../model/errors.js';
import type { Principal } from '../../model/principal.js';
import type { DeferredRequest, RouteEntry, StoredResponse } from './types.js';

/** Carries the sender's secret on a deferred request svc sends; never forwarded to a container. */
export const DEFERRED_HEADER = 'x-svc-deferred';

const RESPOND_ASYNC = /(?:^|,)\s*respond-async\s*(?:[,;]|$)/i;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);

/** Whether the client asked for `respond-async` among its preferences. */
export function prefersAsync(headers: IncomingHttpHeaders): boolean {
  const prefer = headers.prefer;
  return prefer !== undefined && (Array.isArray(prefer) ? prefer : [prefer]).some((value) => RESPOND_ASYNC.test(value));
}

/** Whether svc itself sends this request (a deferred one), by the process's secret. */
export function sentBySvc(headers: IncomingHttpHeaders, secret: string | undefined): boolean {
  return secret !== undefined && headers[DEFERRED_HEADER] === secret;
}

export interface DeferredSenderOptions {
  /** svc's own gateway (`http://127.0.0.1:7420`), known once it listens. */
  readonly url: () => string;
  readonly secret: string;
  /** The largest answer body kept; a longer one ends the call with `payload_too_large`. */
  readonly maxBodyBytes: number;
}

/** Sends deferred requests through svc's gateway and reads their whole answer. */
export function createDeferredSender(
  options: DeferredSenderOptions,
): (deferred: DeferredRequest, signal: AbortSignal) => Promise<StoredResponse> {
  return async (deferred, signal) => {
    const headers = [...deferred.headers, DEFERRED_HEADER, options.secret];
    const body = Buffer.from(deferred.body, 'base64');
    const answer = await request(`${options.url()}${deferred.target}`, {
      method: deferred.method as 'GET',
      headers,
      body: body.length > 0 ? body : null,
      signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of answer.body) {
      size += (chunk as Buffer).length;
      if (size > options.maxBodyBytes) {
        answer.body.destroy();
        throw new SvcError(
          'payload_too_large',
          `the answer's body is over ${options.maxBodyBytes} bytes; a request sent with Prefer: respond-async keeps at most that much of its answer.`,
          { hint: 'Answer with less (a name or a URL of the data), or send the request without Prefer: respond-async.' },
        );
      }
      chunks.push(chunk as Buffer);
    }
    return { status: answer.statusCode, headers: flatHeaders(answer.headers), body: Buffer.concat(chunks).toString('base64') };
  };
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): string[] {
  const flat: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) flat.push(name, one);
  }
  return flat;
}

/** What the gateway hands over of a request it defers. */
export interface DeferralRequest {
  readonly entry: RouteEntry;
  /** Who the access check found; null for a public workload. */
  readonly principal: Principal | null;
  readonly request: DeferredRequest;
  /** The client's `X-Svc-Callback-Url`, as it sent it. */
  readonly callbackHeader: string | undefined;
}

/** The gateway's side of deferred requests: the process's secret, and where a deferred request is kept. */
export interface Deferral {
  readonly secret: string;
  /** Keeps the request as a call; answers the 202's `Location` and body. */
  keep(request: DeferralRequest): Promise<{ readonly location: string; readonly body: unknown }>;
}
