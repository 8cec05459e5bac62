import { type Client, Pool, type Dispatcher } from 'undici';
import { UpstreamConnections } from './upstream-connections.js';
import type { SvcError } from '../../model/errors.js';
import type { Instance, ServiceRegistry } from '../../infra/registry/types.js';

/**
 * One request at a time per connection (a slow answer never holds up another), and none of
 * undici's own time limits (300 s for the answer's head, 300 s between body chunks): a call's
 * time-out is its workload's `timeout` (up to a day, call-timeout.ts), and an ASGI app's stream
 * may rightly stay quiet for longer.
 */
export const POOL_OPTIONS = { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 } as const;

/**
 * Keeps the connections to each container worker (over its Unix socket or TCP
 * address; upstream-connections.ts), made on first use and closed when the
 * registry drops the instance. Connections are reused across requests: no
 * connect cost on the hot path. `dispatch` is undici's lowest layer: the caller's handler gets the
 * response head and body chunks as they arrive (see upstream-call.ts).
 */
export class UpstreamPools {
  readonly #pools = new Map<string, Upstream>();
  readonly #unwatch: () => void;

  readonly #crashCause: ((instance: Instance) => SvcError | undefined) | undefined;

  /** `crashCause`: the scheduler driver's word on why an instance's worker died with requests in hand. */
  constructor(registry: ServiceRegistry, options: { readonly crashCause?: (instance: Instance) => SvcError | undefined } = {}) {
    this.#unwatch = registry.watch((service, instances) => this.#prune(service, instances));
    this.#crashCause = options.crashCause;
  }

  /** Why the instance's worker died, when the driver knows (killed for memory); undefined otherwise. */
  crashCause(instance: Instance): SvcError | undefined {
    return this.#crashCause?.(instance);
  }

  dispatch(instance: Instance, request: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    this.#upstream(instance).connections.dispatch(request, handler);
  }

  /** undici's streaming request API, for answers the control plane reads itself (an app's OpenAPI description). */
  request(instance: Instance, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
    const upstream = this.#upstream(instance);
    // Rare, and its body is read after the call returns: a small pool of its own, apart from the hot path's connections.
    upstream.reads ??= new Pool(upstream.origin, { ...upstream.options, connections: CONTROL_READ_CONNECTIONS });
    return upstream.reads.request(options);
  }

  async close(): Promise<void> {
    this.#unwatch();
    const upstreams = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(upstreams.flatMap((upstream) => [upstream.connections.destroy(), upstream.reads?.destroy()]));
  }

  #upstream(instance: Instance): Upstream {
    let upstream = this.#pools.get(instance.id);
    if (!upstream) {
      const address = instance.address;
      const [origin, options] =
        address.kind === 'unix'
          ? ['http://localhost', { ...POOL_OPTIONS, socketPath: address.socketPath }]
          : [`http://${address.host}:${address.port}`, { ...POOL_OPTIONS }];
      upstream = { connections: new UpstreamConnections(origin, options), service: instance.service, origin, options, reads: null };
      this.#pools.set(instance.id, upstream);
    }
    return upstream;
  }

  /** Closes the connections to containers that left a service. */
  #prune(service: string, current: readonly Instance[]): void {
    const live = new Set(current.map((instance) => instance.id));
    for (const [id, upstream] of this.#pools) {
      if (upstream.service !== service || live.has(id)) continue;
      this.#pools.delete(id);
      // close() lets requests already sent finish; the container is draining too.
      void upstream.connections.close().catch(() => {});
      void upstream.reads?.close().catch(() => {});
    }
  }
}

/** Connections for the control plane's own reads of one worker (request()). */
const CONTROL_READ_CONNECTIONS = 2;

/** What the gateway keeps per container worker. */
interface Upstream {
  readonly connections: UpstreamConnections;
  readonly service: string;
  readonly origin: string;
  readonly options: Client.Options;
  reads: Pool | null;
}
