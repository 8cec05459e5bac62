/**
 * What a svc replica answers while it does not serve. With several replicas
 * (`state: consul`) only the elected leader runs deployments: a standby
 * answers every API and workload request with 503 `not_leader`; only
 * `/_svc/health` (alive) and the signed bundle downloads (the bundles are
 * shared) still answer. `/_svc/ready`, the check a load balancer (Consul,
 * Fabio, Traefik) routes by, is 200 only once the replica serves: it leads
 * and has restored its deployments (`starting` lets requests through, as
 * deployment changes wait for the restore).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { SvcError } from '../errors.js';
import { writeRawError } from '../gateway/raw-error.js';
import { errorAnswer, pathOf } from '../gateway/respond-error.js';

export type ReplicaRole = 'starting' | 'standby' | 'ready';

export const READY_PATH = '/_svc/ready';
const ALWAYS_SERVED = [/^\/_svc\/health$/, /^\/api\/v1\/bundles\/[0-9a-f]{64}\/artifact$/];

export interface StandbyGate {
  /** Answers the request when this replica does not serve it (true), or leaves it to the gateway (false). */
  request(req: IncomingMessage, res: ServerResponse): boolean;
  /** The same for a WebSocket upgrade. */
  upgrade(req: IncomingMessage, socket: Duplex): boolean;
}

export function createStandbyGate(role: () => ReplicaRole): StandbyGate {
  return {
    request(req, res) {
      const path = pathOf(req.url);
      if (path === READY_PATH) {
        const current = role();
        const body = JSON.stringify({ status: current });
        res.writeHead(current === 'ready' ? 200 : 503, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
        res.end(body);
        return true;
      }
      if (role() !== 'standby' || ALWAYS_SERVED.some((pattern) => pattern.test(path))) return false;
      const answer = errorAnswer(standbyError(), undefined);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
      return true;
    },
    upgrade(req, socket) {
      if (role() !== 'standby') return false;
      writeRawError(socket, standbyError());
      return true;
    },
  };
}

function standbyError(): SvcError {
  return new SvcError('not_leader', 'this svc replica is a standby: another replica leads and serves the API and the workloads.', {
    hint: 'Send requests through the load balancer, which routes to the replica whose /_svc/ready answers 200; retry after Retry-After seconds.',
    headers: { 'Retry-After': '1' },
  });
}
