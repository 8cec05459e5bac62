/**
 * How a follower answers what only the leader can: the API, the dashboard,
 * the device flow, the bundle downloads (the bundles are in the leader's data
 * dir). It forwards the request as it is (method, path, headers, streamed
 * body both ways, so uploads and followed log streams work) to the address
 * the leader advertises in the lock key, and streams the answer back.
 *
 * A forwarded request carries `X-Svc-Forwarded-By`; a replica that gets one
 * and does not lead answers 503 `not_leader` instead of forwarding again, so
 * two replicas that disagree about who leads (for a moment, during a
 * failover) cannot bounce a request between them.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { SvcError } from '../../model/errors.js';
import { endToEndHeaders } from '../gateway/forward-headers.js';
import { respondError } from '../gateway/respond-error.js';

export const FORWARDED_BY_HEADER = 'x-svc-forwarded-by';

export interface LeaderForwardOptions {
  /** The leader's advertised URL, or null while none is known. */
  leaderAddress(): string | null;
  /** This replica's own advertised URL (known once it listens): never forward to ourselves. */
  self(): string;
}

export interface LeaderForward {
  /** Forwards the request to the leader, or answers 503 `not_leader` when that is impossible. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  close(): void;
}

export function createLeaderForward(options: LeaderForwardOptions): LeaderForward {
  // Kept-alive connections to the leader: a follower forwards every API call.
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  // The addresses change only with the leader: parsed once per value, not per request.
  const leaderUrl = lastParsed();
  const selfUrl = lastParsed();
  return {
    handle(req, res) {
      const leader = options.leaderAddress();
      if (req.headers[FORWARDED_BY_HEADER] !== undefined)
        return answer(
          res,
          cannotForward('it was forwarded here by another replica that took this one for the leader; the leadership is changing'),
        );
      if (leader === null) return answer(res, cannotForward('no replica leads at the moment'));
      const origin = leaderUrl(leader);
      if (origin === null)
        return answer(res, cannotForward(`the lock key names the leader's address as ${JSON.stringify(leader)}, which is not a URL`));
      if (origin.origin === selfUrl(options.self())?.origin)
        return answer(res, cannotForward('the lock key names this replica, which no longer leads'));
      // Only a path goes on, to the leader's origin: a target like `//host/…` or `http://host/…` must not pick the host.
      const path = req.url ?? '/';
      if (!path.startsWith('/') || path.startsWith('//')) return answer(res, badTarget());
      const secure = origin.protocol === 'https:';
      const upstream = (secure ? https : http).request({
        protocol: origin.protocol,
        hostname: origin.hostname.replace(/^\[|\]$/g, ''),
        port: origin.port,
        method: req.method,
        path,
        headers: { ...endToEndHeaders(req.headers), [FORWARDED_BY_HEADER]: options.self() },
        agent: secure ? agents.https : agents.http,
      });
      upstream.on('response', (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.statusMessage, endToEndHeaders(reply.headers));
        reply.pipe(res);
        reply.on('error', () => res.destroy());
      });
      upstream.on('error', (error) => {
        // Once the answer has started, respondError cuts the connection: the client sees a broken answer, not a short one.
        answer(res, cannotForward(`the leader at ${leader} did not answer (${(error as NodeJS.ErrnoException).code ?? error.message})`));
      });
      // The client left: stop the leader's work for it (a followed log stream, a long call).
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      req.pipe(upstream);
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** Our own answers here are all exposed errors: nothing to report. */
function answer(res: ServerResponse, error: SvcError): void {
  respondError(res, error, undefined, () => {});
}

function badTarget(): SvcError {
  return new SvcError('bad_request', 'the request target must be a path starting with a single "/".', {
    hint: 'Send the path alone (origin-form), as HTTP clients do: GET /api/v1/whoami.',
  });
}

function cannotForward(why: string): SvcError {
  return new SvcError('not_leader', `this svc replica does not lead and cannot forward the request: ${why}.`, {
    hint: "Retry after Retry-After seconds: a replica takes over within the leader lock's session TTL.",
    headers: { 'Retry-After': '1' },
  });
}

/** A parser that remembers its last address: `new URL` once per change, null for what is not a URL. */
function lastParsed(): (address: string) => URL | null {
  let last: { readonly address: string; readonly url: URL | null } | null = null;
  return (address) => {
    if (last?.address !== address) last = { address, url: URL.canParse(address) ? new URL(address) : null };
    return last.url;
  };
}
