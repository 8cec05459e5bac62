/**
 * How the client reached svc: the protocol it spoke and its address, as the
 * gateway tells workloads (`X-Forwarded-Proto`, `X-Forwarded-For`) and judges
 * cookies. Directly, from the connection (TLS here or not). With `trustProxy`
 * (svc reachable only through a proxy in front that terminates TLS), from
 * what that proxy says; otherwise a client's own X-Forwarded-* is never
 * believed, since anyone could send it.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** `http` or `https`, as the client spoke to the gateway or, behind a trusted proxy, to the proxy. */
export function protocolOf(req: IncomingMessage, trustProxy = false): 'http' | 'https' {
  if (trustProxy) {
    const said = firstValue(req.headers['x-forwarded-proto'])?.toLowerCase();
    if (said === 'https' || said === 'http') return said;
  }
  return (req.socket as TLSSocket).encrypted ? 'https' : 'http';
}

/** The X-Forwarded-For a workload gets: the peer's address, after the trusted proxy's chain. */
export function forwardedFor(req: IncomingMessage, trustProxy = false): string {
  const peer = req.socket.remoteAddress ?? '';
  const chain = trustProxy ? req.headers['x-forwarded-for'] : undefined;
  return typeof chain === 'string' && chain.trim() !== '' ? `${chain}, ${peer}` : peer;
}

/** The first of a comma-separated header's values (a proxy chain: the outermost one's), trimmed. */
function firstValue(header: string | string[] | undefined): string | undefined {
  const text = Array.isArray(header) ? header[0] : header;
  return text?.split(',')[0]?.trim();
}
