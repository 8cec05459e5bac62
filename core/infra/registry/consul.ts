/**
 * The Consul service registry: the instances Nomad registers in Consul (one
 * Consul service per deployment unit, one instance per worker port), read
 * with blocking queries on `/v1/health/service/<name>?passing` and pushed to
 * watchers on every change. Only instances whose checks all pass are kept.
 * Each tracked service has its own watch loop: `?index=` from the last
 * answer, the index reset to 0 when it goes backwards (a snapshot restore),
 * and exponential back-off while Consul fails. Tracked services live in an
 * LRU cache (lru-cache); a service is tracked from the first time someone
 * asks for it (`instances`, `track`, `register`). `register`/`deregister`
 * go through the local agent's API. Their failures are `internal` errors quoting Consul
 * (there is no registry-specific error code yet).
 */
import type { CallObserver } from '../metrics/platform-metrics.js';
import { LRUCache } from 'lru-cache';
import { nomadJobId } from '../../model/nomad-job-id.js';
import { SvcError } from '../../model/errors.js';
import { backoffMs, sleep } from '../state/backoff.js';
import { ConsulClient, ConsulError, type HealthEntry, type Read } from '../state/consul-client.js';
import type { Instance, RegistryListener, ServiceRegistry } from './types.js';

export interface ConsulRegistryOptions {
  /** Told how long each non-blocking Consul call took (`/metrics`). */
  readonly observe?: CallObserver | undefined;
  /** Consul agent address, e.g. `http://127.0.0.1:8500`. */
  readonly address: string;
  /** ACL token (`X-Consul-Token`): needs `service_prefix "" { policy = "read" }` (and `write` to register). */
  readonly token?: string;
  /** The Consul service name of a deployment unit (default: the Nomad job ID, core/model/nomad-job-id.ts). */
  readonly serviceName?: (service: string) => string;
  /** How long one blocking query waits (default 5 min). */
  readonly waitMs?: number;
  /** Back-off while Consul fails: first delay and cap (default 250 ms, 30 s). */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  /** How many services are tracked at most; the least recently asked for is dropped (default 1000). */
  readonly maxServices?: number;
  /** Told about every failed read of a watch loop, with the delay before the next attempt. */
  readonly onError?: (error: Error, attempt: number, delayMs: number) => void;
}

interface Tracked {
  readonly service: string;
  readonly name: string;
  readonly controller: AbortController;
  instances: readonly Instance[];
  index: number;
  ready: Promise<void>;
}

const EMPTY: readonly Instance[] = Object.freeze([]);

export class ConsulRegistry implements ServiceRegistry {
  readonly name = 'consul';
  readonly #consul: ConsulClient;
  readonly #serviceName: (service: string) => string;
  readonly #waitMs: number;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #onError: ConsulRegistryOptions['onError'];
  readonly #tracked: LRUCache<string, Tracked>;
  readonly #listeners = new Set<RegistryListener>();
  /** Aborted by retryNow(): every loop sleeping in back-off reads again. */
  #wake = new AbortController();
  #closed = false;

  constructor(options: ConsulRegistryOptions) {
    // One blocking query per tracked service: most of svc's share of Consul's connections per client (see ConsulClientOptions).
    this.#consul = new ConsulClient({ address: options.address, token: options.token, maxSockets: 128, observe: options.observe });
    this.#serviceName = options.serviceName ?? defaultServiceName;
    this.#waitMs = options.waitMs ?? 5 * 60_000;
    this.#retryBaseMs = options.retryBaseMs ?? 250;
    this.#retryMaxMs = options.retryMaxMs ?? 30_000;
    this.#onError = options.onError;
    this.#tracked = new LRUCache<string, Tracked>({
      max: options.maxServices ?? 1000,
      dispose: (tracked) => tracked.controller.abort(),
    });
  }

  instances(service: string): readonly Instance[] {
    return this.#track(service).instances;
  }

  /** Starts tracking a service (if it is not yet) and resolves once its instances were read once. */
  async track(service: string): Promise<readonly Instance[]> {
    const tracked = this.#track(service);
    await tracked.ready;
    return tracked.instances;
  }

  watch(listener: RegistryListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async register(instance: Instance): Promise<void> {
    if (instance.address.kind !== 'tcp')
      throw new SvcError('bad_request', `the Consul registry takes TCP addresses only; instance ${instance.id} has a Unix socket`);
    const previous = this.#serviceOf(instance.id);
    const definition = {
      ID: instance.id,
      Name: this.#serviceName(instance.service),
      Address: instance.address.host,
      Port: instance.address.port,
      Tags: ['svc'],
      Meta: { ...instance.meta, svc_service: instance.service, svc_capacity: String(instance.capacity) },
    };
    await this.#agent(() => this.#consul.registerService(definition));
    // Read our own write: refresh the service it left, then the one it joined.
    if (previous !== undefined && previous.service !== instance.service) await this.#refresh(previous);
    await this.#refresh(this.#track(instance.service));
  }

  async deregister(id: string): Promise<void> {
    await this.#agent(async () => {
      try {
        await this.#consul.deregisterService(id);
      } catch (error) {
        if (!(error instanceof ConsulError && error.status === 404)) throw error; // not registered here: nothing to do
      }
    });
    const tracked = this.#serviceOf(id);
    if (tracked !== undefined) await this.#refresh(tracked);
  }

  /** Ends every back-off now (Consul answers again): each watch reads at once instead of after up to `retryMaxMs`. */
  retryNow(): void {
    const wake = this.#wake;
    this.#wake = new AbortController();
    wake.abort();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listeners.clear();
    this.#tracked.clear();
    this.#consul.close();
  }

  #track(service: string): Tracked {
    const existing = this.#tracked.get(service);
    if (existing !== undefined || this.#closed)
      return existing ?? { service, name: '', controller: new AbortController(), instances: EMPTY, index: 0, ready: Promise.resolve() };
    let markReady!: () => void;
    const tracked: Tracked = {
      service,
      name: this.#serviceName(service),
      controller: new AbortController(),
      instances: EMPTY,
      index: 0,
      ready: new Promise<void>((resolve) => {
        markReady = resolve;
      }),
    };
    this.#tracked.set(service, tracked);
    void this.#loop(tracked, markReady);
    return tracked;
  }

  #serviceOf(id: string): Tracked | undefined {
    for (const tracked of this.#tracked.values()) if (tracked.instances.some((i) => i.id === id)) return tracked;
    return undefined;
  }

  async #loop(tracked: Tracked, markReady: () => void): Promise<void> {
    const { signal } = tracked.controller;
    let attempt = 0;
    while (!signal.aborted) {
      const sent = tracked.index;
      try {
        const response = await this.#health(tracked, sent, signal);
        attempt = 0;
        const index = response.index!;
        if (index < sent) {
          // The index went backwards: start over from 0, which answers at once.
          tracked.index = 0;
          continue;
        }
        this.#apply(tracked, index, response);
        markReady();
      } catch (error) {
        if (signal.aborted) return;
        attempt += 1;
        const delay = backoffMs(attempt, this.#retryBaseMs, this.#retryMaxMs);
        this.#onError?.(error as Error, attempt, delay);
        try {
          await sleep(delay, AbortSignal.any([signal, this.#wake.signal]));
        } catch {
          if (signal.aborted) return;
        }
      }
    }
  }

  async #refresh(tracked: Tracked): Promise<void> {
    if (tracked.name === '') return;
    try {
      const response = await this.#health(tracked, 0, tracked.controller.signal);
      this.#apply(tracked, response.index!, response);
    } catch (error) {
      if (tracked.controller.signal.aborted) return;
      throw registryError(error, this.#consul.address);
    }
  }

  async #health(tracked: Tracked, index: number, signal: AbortSignal): Promise<Read<HealthEntry[]>> {
    const read = await this.#consul.healthService(tracked.name, { signal, block: index > 0 ? { index, waitMs: this.#waitMs } : undefined });
    if (read.index === null) throw new Error(`Consul answered ${tracked.name}'s health without a valid X-Consul-Index`);
    return read;
  }

  /** Takes an answer unless an answer as new or newer was taken already; pushes the list when it changed. */
  #apply(tracked: Tracked, index: number, read: Read<HealthEntry[]>): void {
    if (tracked.index !== 0 && index <= tracked.index) return;
    tracked.index = index;
    const instances = read.value
      .map((entry) => toInstance(tracked.service, entry))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (sameInstances(tracked.instances, instances)) return;
    tracked.instances = Object.freeze(instances.map((i) => Object.freeze(i)));
    if (this.#tracked.peek(tracked.service) !== tracked) return;
    for (const listener of [...this.#listeners]) listener(tracked.service, tracked.instances);
  }

  async #agent(call: () => Promise<void>): Promise<void> {
    if (this.#closed) throw new SvcError('internal', 'the Consul registry is closed');
    try {
      await call();
    } catch (error) {
      throw registryError(error, this.#consul.address);
    }
  }
}

function toInstance(service: string, entry: HealthEntry): Instance {
  const meta = entry.Service.Meta ?? {};
  const capacity = Number(meta.svc_capacity ?? meta.svc_concurrency ?? '1');
  return {
    id: entry.Service.ID,
    service,
    address: { kind: 'tcp', host: entry.Service.Address || entry.Node.Address, port: entry.Service.Port },
    capacity: Number.isSafeInteger(capacity) && capacity > 0 ? capacity : 1,
    meta: { ...meta },
  };
}

function sameInstances(a: readonly Instance[], b: readonly Instance[]): boolean {
  return a.length === b.length && JSON.stringify(a) === JSON.stringify(b);
}

/** `ws/app/stage[@serial]/workload` → the Nomad job ID (serial included), which is also the Consul service name. */
export const defaultServiceName = nomadJobId;

function registryError(error: unknown, address: string): SvcError {
  if (error instanceof SvcError) return error;
  if (error instanceof ConsulError) {
    const hint =
      error.status === 403 ? "Give svc's Consul token write access to the services it registers (see docs/operators.md)." : undefined;
    return new SvcError('internal', `Consul refused the registry call (${error.message})`, { hint, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SvcError('internal', `svc could not reach Consul at ${address} (${message})`, { cause: error });
}
