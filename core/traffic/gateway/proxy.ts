import { Pool, type Dispatcher } from 'undici';
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
 * Keeps one undici pool per container worker (over its Unix socket or TCP
 * address), created on first use and closed when the registry drops the
 * instance. Connections are reused across requests: no connect cost on the
 * hot path. `dispatch` is undici's lowest layer: the caller's handler gets the
 * response head and body chunks as they arrive (see upstream-call.ts).
 */
export class UpstreamPools {
  readonly #pools = new Map<string, { readonly pool: Pool; readonly service: string }>();
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
    this.#pool(instance).dispatch(request, handler);
  }

  /** undici's streaming request API, for answers the control plane reads itself (an app's OpenAPI description). */
  request(instance: Instance, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
    return this.#pool(instance).request(options);
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
      const options = { ...POOL_OPTIONS, connections: Math.max(1, instance.capacity) };
      const pool =
        instance.address.kind === 'unix'
          ? new Pool('http://localhost', { ...options, socketPath: instance.address.socketPath })
          : new Pool(`http://${instance.address.host}:${instance.address.port}`, options);
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
