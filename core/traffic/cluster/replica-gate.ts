/**
 * What a svc replica answers itself and what it leaves to its gateway, by
 * its role among the replicas that share Consul KV (`state: consul`):
 *
 * - `standby`: it has no copy of the leader's route table (not loaded yet,
 *   or it lost the leadership, or the registry is not Consul's): it answers
 *   every API and workload request with 503 `not_leader`; only
 *   `/_svc/health` (alive) and the signed bundle downloads still answer.
 * - `following`: another replica leads. Workload requests that match the
 *   route table copied from the leader are served here (admission, the
 *   Consul registry's instances), but those with `Prefer: respond-async`,
 *   which the leader keeps and sends; everything else — the API, the dashboard,
 *   the device flow, bundle downloads, unknown paths — goes to the leader
 *   (leader-forward.ts).
 * - `starting` (the leader restores its deployments; requests go through, as
 *   deployment changes wait for the restore) and `ready`: the leader serves all.
 * - `stranded`: it led until Consul stopped answering (no session renewal for
 *   a TTL). It serves the workload URLs of its route table as a follower
 *   does (from stale routes: nothing can tell it what changed), and answers
 *   the rest with 503 `not_leader` naming Consul, until `svc server` starts
 *   it again as a follower once Consul answers.
 *
 * `/_svc/ready`, the check a load balancer (Consul, Fabio, Traefik) routes
 * by, is 200 for `following`, `stranded` and `ready`, and for `starting` on a replica
 * that won the election with the leader's routes copied (they serve during
 * its restore, so a failover does not take the last ready replica out):
 * every replica that can take traffic gets it. Its body names the agents
 * svc cannot reach (`outages`) and whether the routes are `stale`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { SvcError } from '../../model/errors.js';
import { prefersAsync } from '../gateway/deferred.js';
import { writeRawError } from '../gateway/raw-error.js';
import { pathOf, respondError } from '../gateway/respond-error.js';
import type { RouteTable } from '../gateway/route-table.js';
import type { Outage } from './agent-watch.js';
import type { LeaderForward } from './leader-forward.js';
import { HEALTH_PATH, READY_PATH } from '../../model/platform-paths.js';

export type ReplicaRole = 'standby' | 'following' | 'starting' | 'ready' | 'stranded';

const ARTIFACT = /^\/api\/v1\/bundles\/[0-9a-f]{64}\/artifact$/;

export interface ReplicaGate {
  /** Answers the request when this replica does not serve it itself (true), or leaves it to the gateway (false). */
  request(req: IncomingMessage, res: ServerResponse): boolean;
  /** The same for a WebSocket upgrade. */
  upgrade(req: IncomingMessage, socket: Duplex): boolean;
}

export interface ReplicaGateOptions {
  role(): ReplicaRole;
  /** The route table (a follower's holds the leader's routes). */
  readonly routes: RouteTable;
  /** Where a follower sends what only the leader answers. */
  readonly forward: LeaderForward;
  /** Whether a `starting` leader already serves (the routes it copied as a follower): then it is ready for the load balancer. */
  servesWhileStarting?(): boolean;
  /** The agents svc cannot reach now, by name (`consul`, `nomad`); Consul's makes the routes stale. */
  outages?(): Readonly<Record<string, Outage>>;
}

export function createReplicaGate(options: ReplicaGateOptions): ReplicaGate {
  const { routes, forward } = options;
  return {
    request(req, res) {
      const role = options.role();
      // A leader serves everything but its readiness itself: the common request costs no parse of its URL here.
      if ((role === 'ready' || role === 'starting') && !req.url?.startsWith(READY_PATH)) return false;
      const path = pathOf(req.url);
      if (path === READY_PATH) {
        const outages = options.outages?.() ?? {};
        const body = JSON.stringify({ status: role, routes: outages.consul === undefined ? 'current' : 'stale', outages });
        const ready =
          role === 'following' ||
          role === 'ready' ||
          role === 'stranded' ||
          (role === 'starting' && options.servesWhileStarting?.() === true);
        res.writeHead(ready ? 200 : 503, {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
          'Cache-Control': 'no-store',
        });
        res.end(body);
        return true;
      }
      if (role === 'starting' || role === 'ready' || path === HEALTH_PATH) return false;
      if (role === 'following' || role === 'stranded') {
        // A request to answer later is kept and sent by the leader: a follower hands it on (deferred.ts).
        if (routes.match(path, req.headers.host) !== null && !(role === 'following' && prefersAsync(req.headers))) return false;
        if (role === 'following') forward.handle(req, res);
        else respondError(res, strandedError(options.outages?.().consul), undefined, () => {});
        return true;
      }
      if (ARTIFACT.test(path)) return false;
      respondError(res, standbyError(), undefined, () => {}); // an exposed error: nothing to report
      return true;
    },
    upgrade(_req, socket) {
      const role = options.role();
      // The API has no WebSockets: a follower's upgrades are the workloads' own, routed here.
      if (role !== 'standby') return false;
      writeRawError(socket, standbyError());
      return true;
    },
  };
}

function strandedError(outage: Outage | undefined): SvcError {
  const why = outage === undefined ? 'Consul stopped answering' : `${outage.reason}, since ${outage.since.toISOString()}`;
  return new SvcError(
    'not_leader',
    `this svc replica lost the leadership because ${why}: it serves the workload URLs it knew and takes no changes until Consul answers again.`,
    {
      hint: "Start Consul again (or restore svc's access to it); this replica then starts again as a follower by itself. Retry after Retry-After seconds.",
      headers: { 'Retry-After': '5' },
    },
  );
}

function standbyError(): SvcError {
  return new SvcError(
    'not_leader',
    "this svc replica is a standby: it does not lead and has no copy of the leader's routes (it is starting, or it lost the leadership).",
    {
      hint: 'Send requests through the load balancer, which routes to the replicas whose /_svc/ready answers 200; retry after Retry-After seconds.',
      headers: { 'Retry-After': '1' },
    },
  );
}
