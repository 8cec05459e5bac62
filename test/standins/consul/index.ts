/**
 * An in-process stand-in for a Consul agent (a single-node dev agent, the
 * node `standin`), for tests: the KV store with sessions and locks, agent
 * service registration with HTTP and TTL checks, health and catalog reads,
 * blocking queries and ACL tokens, with Consul's status codes and text error
 * bodies. test/standins/README.md lists the facts it follows, and
 * test/standins/consul.test.ts tests each.
 *
 * Test hooks: `snapshot()`/`restore()` move the state, and with it every
 * index, back (as a snapshot restore does), `reapTombstones()` drops KV
 * tombstones (a prefix index can then go backwards), `failNext()` answers
 * the next matching requests with an error, `requests` records what came in.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerAnonymous } from './acl.js';
import { Agent } from './agent.js';
import { handleCatalogServices, handleHealthService } from './health.js';
import { HttpError, NOT_AN_ENDPOINT, sendText, type Call } from './http.js';
import { handleKv } from './kv.js';
import { Sessions } from './sessions.js';
import { ConsulState, type CheckStatus, type Snapshot } from './state.js';
import { realTimers, type Timers } from '../../helpers/manual-timers.js';

export interface ConsulStandinOptions {
  /** When set, ACLs are on with default deny: every request needs this token. */
  readonly aclToken?: string;
  /** Random jitter up to wait/16 on blocking queries, as Consul adds (default true). */
  readonly jitter?: boolean;
  /** `kv_max_value_size` (default 512 KiB). */
  readonly kvMaxValueSize?: number;
  /** What runs the session TTLs (default: real timers); a test passes `ManualTimers` to expire sessions at once. */
  readonly sessionTimers?: Timers;
  /** KV key validation of Consul 1.21.5 and later (default true); false answers as 1.21.4, which takes any key. */
  readonly validateKvKeys?: boolean;
}

export interface Fault {
  /** Which requests fail (matched against method + ' ' + path, e.g. /^GET \/v1\/health\//). */
  readonly match: RegExp;
  readonly count: number;
  readonly status?: number;
  readonly body?: string;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly at: number;
  status?: number;
}

export interface ConsulStandin {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly state: ConsulState;
  readonly requests: RecordedRequest[];
  /** The raft index: raised by every write. */
  index(): number;
  snapshot(): Snapshot;
  restore(snapshot: Snapshot): void;
  reapTombstones(): void;
  failNext(fault: Fault): void;
  setCheckStatus(checkId: string, status: CheckStatus, output?: string): void;
  close(): Promise<void>;
}

export async function startConsulStandin(options: ConsulStandinOptions = {}): Promise<ConsulStandin> {
  const state = new ConsulState();
  const jitter = options.jitter ?? true;
  const agent = new Agent(state);
  const sessions = new Sessions(state, jitter, options.sessionTimers ?? realTimers);
  const kvOptions = { maxValueSize: options.kvMaxValueSize ?? 512 * 1024, jitter, validateKeys: options.validateKvKeys ?? true };
  const requests: RecordedRequest[] = [];
  const faults: { match: RegExp; left: number; status: number; body: string }[] = [];

  const route = (call: Call): void => {
    const { path } = call;
    if (path.startsWith('/v1/kv/')) return handleKv(call, state, kvOptions);
    if (path.startsWith('/v1/session/')) return sessions.handle(call);
    if (path.startsWith('/v1/agent/')) return agent.handle(call);
    if (path.startsWith('/v1/health/service/')) return handleHealthService(call, state, jitter);
    if (path === '/v1/catalog/services') return handleCatalogServices(call, state, jitter);
    if (path === '/v1/status/leader') {
      call.res.writeHead(200, { 'Content-Type': 'application/json' }).end('"127.0.0.1:8300"');
      return;
    }
    throw new HttpError(404, NOT_AN_ENDPOINT);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // The request target as sent: WHATWG URL parsing would resolve dot segments, %2E%2E included, which Go does not.
      const target = req.url ?? '/';
      const at = target.indexOf('?');
      const rawPath = at === -1 ? target : target.slice(0, at);
      const search = at === -1 ? '' : target.slice(at);
      res.setHeader('X-Consul-Default-Acl-Policy', options.aclToken === undefined ? 'allow' : 'deny');
      let path: string;
      try {
        path = decodeURIComponent(rawPath);
      } catch {
        return sendText(res, 400, `invalid URL escape ${JSON.stringify(rawPath)}`);
      }
      const recorded: RecordedRequest = { method: req.method ?? 'GET', path, query: search, at: Date.now() };
      requests.push(recorded);
      res.on('finish', () => {
        recorded.status = res.statusCode;
      });
      // Go's ServeMux answers an unclean path (//, /./, /../ as sent, not percent-encoded) with a 307 to the clean one.
      const clean = cleanPath(rawPath);
      if (clean !== rawPath) {
        res.writeHead(307, { Location: clean + search }).end();
        return;
      }
      const fault = faults.find((f) => f.left > 0 && f.match.test(`${recorded.method} ${path}`));
      if (fault !== undefined) {
        fault.left -= 1;
        return sendText(res, fault.status, fault.body);
      }
      const query = new URLSearchParams(search);
      const call: Call = { req, res, method: req.method ?? 'GET', path, rawPath, query, body: Buffer.concat(chunks) };
      try {
        if (options.aclToken !== undefined) {
          const token =
            req.headers['x-consul-token'] ?? query.get('token') ?? /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
          if (token === undefined || token === '') return answerAnonymous(call, state);
          if (token !== options.aclToken) return sendText(res, 403, 'ACL not found');
        }
        route(call);
      } catch (error) {
        if (error instanceof HttpError) sendText(res, error.status, error.message);
        else sendText(res, 500, (error as Error).message);
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    state,
    requests,
    index: () => state.raft,
    snapshot: () => state.snapshot(),
    restore: (snapshot) => state.restore(snapshot),
    reapTombstones() {
      const index = state.apply();
      state.tombstones.clear();
      state.touch('tombstones', index);
      state.changed();
    },
    failNext(fault) {
      faults.push({
        match: fault.match,
        left: fault.count,
        status: fault.status ?? 500,
        body: fault.body ?? 'rpc error making call: stand-in fault',
      });
    },
    setCheckStatus: (checkId, status, output) => agent.setCheckStatus(checkId, status, output),
    async close() {
      agent.close();
      sessions.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function cleanPath(path: string): string {
  if (!/\/\/|\/\.\.?(\/|$)/.test(path)) return path;
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}${path.endsWith('/') && out.length > 0 ? '/' : ''}`;
}
