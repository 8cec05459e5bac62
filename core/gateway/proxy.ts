import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import type { Instance, ServiceRegistry } from '../registry/types.js';
import { upstreamError } from './upstream-error.js';

/**
 * Headers that describe one hop, never forwarded (RFC 9110 §7.6.1), plus ones undici sets
 * itself. Host is kept: apps build absolute URLs from it (FastAPI's url_for).
 */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length', 'expect',
]);

/** Headers a sender names in `Connection` are for this hop only, too. */
function connectionTokens(value: string | string[] | undefined): Set<string> {
  if (value === undefined) return new Set();
  const text = Array.isArray(value) ? value.join(',') : value;
  return new Set(text.split(',').map((token) => token.trim().toLowerCase()).filter(Boolean));
}

export interface ForwardRequest {
  readonly method: string;
  /** Path and query as the container sees them. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Headers added or replaced by the gateway. */
  readonly extraHeaders: Record<string, string>;
  /** Headers removed (lower case), e.g. the platform's own Authorization. */
  readonly dropHeaders: readonly string[];
  readonly body: Readable | null;
  /** Aborted when the client goes away; the forward then fails with `client_closed`. */
  readonly signal: AbortSignal;
}

export interface ForwardResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Dispatcher.ResponseData['body'];
}

/**
 * Keeps one undici pool per container (over its Unix socket or TCP address),
 * created on first use and closed when the registry drops the container.
 * Connections are reused across requests: no connect cost on the hot path.
 */
export class UpstreamPools {
  readonly #pools = new Map<string, { readonly pool: Pool; readonly service: string }>();
  readonly #registry: ServiceRegistry;
  readonly #unwatch: () => void;

  constructor(registry: ServiceRegistry) {
    this.#registry = registry;
    this.#unwatch = registry.watch((service, instances) => this.#prune(service, instances));
  }

  async forward(instance: Instance, request: ForwardRequest): Promise<ForwardResponse> {
    const headers: Record<string, string | string[]> = {};
    const named = connectionTokens(request.headers.connection);
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name) || named.has(name) || request.dropHeaders.includes(name)) continue;
      headers[name] = value;
    }
    Object.assign(headers, request.extraHeaders);
    try {
      const response = await this.#pool(instance).request({
        method: request.method as 'GET',
        path: request.path,
        headers,
        body: request.body,
        signal: request.signal,
      });
      const outHeaders: Record<string, string | string[]> = {};
      const namedOut = connectionTokens(response.headers.connection);
      for (const [name, value] of Object.entries(response.headers)) {
        if (value === undefined || namedOut.has(name) || (HOP_BY_HOP.has(name) && name !== 'content-length')) continue;
        outHeaders[name] = value;
      }
      return { status: response.statusCode, headers: outHeaders, body: response.body };
    } catch (error) {
      throw upstreamError(error, request.signal.aborted);
    }
  }

  async close(): Promise<void> {
    this.#unwatch();
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map(({ pool }) => pool.destroy()));
  }

  #pool(instance: Instance): Pool {
    let entry = this.#pools.get(instance.id);
    if (!entry) {
      const connections = Math.max(1, instance.capacity);
      const pool =
        instance.address.kind === 'unix'
          ? new Pool('http://localhost', { socketPath: instance.address.socketPath, connections, pipelining: 1 })
          : new Pool(`http://${instance.address.host}:${instance.address.port}`, { connections, pipelining: 1 });
      entry = { pool, service: instance.service };
      this.#pools.set(instance.id, entry);
    }
    return entry.pool;
  }

  /** Closes the pools of containers that left a service. */
  #prune(service: string, current: readonly Instance[]): void {
    const live = new Set(current.map((instance) => instance.id));
    for (const [id, entry] of this.#pools) {
      if (entry.service !== service || live.has(id)) continue;
      this.#pools.delete(id);
      // close() lets requests already sent finish; the container is draining too.
      void entry.pool.close().catch(() => {});
    }
  }
}
