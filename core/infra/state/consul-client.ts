/**
 * svc's one door to Consul's HTTP API, shared by the Consul KV store, the
 * Consul registry and leader election: the npm `consul` package, with what
 * those three need on top of it. Every call asks for the response too
 * (`ctx.includeResponse`), so `X-Consul-Index` is read from the headers,
 * also on a 404; KV values come as bytes (`buffer: true`); an AbortSignal
 * cancels a call through the package's `ctx` EventEmitter (`cancel`); a
 * blocking query's timeout leaves room for Consul's wait plus its jitter
 * of up to wait/16. The package keeps connections alive and sends the ACL
 * token as `X-Consul-Token`. A status outside 2xx is a `ConsulError`.
 * Why the package is not used bare: test/core/infra/state/consul-package.test.ts.
 */
import { agentOperation, timed, type CallObserver } from '../metrics/platform-metrics.js';
import { EventEmitter } from 'node:events';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import Consul from 'consul';

export interface ConsulClientOptions {
  /** Base URL of the agent, e.g. `http://127.0.0.1:8500`. */
  readonly address: string;
  /** ACL token sent as `X-Consul-Token`. */
  readonly token?: string;
  /** Told how long each non-blocking call took (`/metrics`). */
  readonly observe?: CallObserver | undefined;
  /** Timeout of a non-blocking call (default 10 s); a blocking one gets its wait on top. */
  readonly timeoutMs?: number;
  /**
   * Connections to the agent at most (default 32); more calls wait for one. Each blocking query
   * holds one for its wait, and Consul refuses a client address past `limits.http_max_conns_per_client`
   * (200 by default) for every call, so the state store, the registry and the leader lock each keep
   * within their share.
   */
  readonly maxSockets?: number;
  /**
   * How long a kept-alive connection may sit unused before svc closes it (default 2 s). It must be
   * shorter than the agent's own idle time-out: a request sent on a connection the agent is closing
   * at that moment fails with ECONNRESET.
   */
  readonly idleSocketMs?: number;
}

/** A KV entry as Consul lists it, with the value's bytes (Consul's `null` for an empty value is an empty buffer). */
export interface KvEntry {
  readonly Key: string;
  readonly Value: Buffer;
  readonly Flags: number;
  readonly LockIndex: number;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
  /** The session holding the key's lock, when one does. */
  readonly Session?: string;
}

/** One instance of `/v1/health/service/<name>`, the fields svc reads. */
export interface HealthEntry {
  readonly Node: { readonly Address: string };
  readonly Service: {
    readonly ID: string;
    readonly Service: string;
    readonly Address: string;
    readonly Port: number;
    readonly Meta: Record<string, string> | null;
  };
}

/** A read's answer and its `X-Consul-Index` (null when absent or not a positive integer). */
export interface Read<T> {
  readonly index: number | null;
  readonly value: T;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface ReadOptions extends CallOptions {
  /** Makes the read a blocking query: it returns once Consul's index passes `index`, or after about `waitMs`. */
  readonly block?: { readonly index: number; readonly waitMs: number };
}

export interface ServiceDefinition {
  readonly ID: string;
  readonly Name: string;
  readonly Address: string;
  readonly Port: number;
  readonly Tags: readonly string[];
  readonly Meta: Record<string, string>;
}

/** Consul answered with a status outside 2xx, or with something that is not the answer the call expects. */
export class ConsulError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly call: string,
    readonly index: number | null = null,
  ) {
    super(`Consul answered ${call} with ${status}${body === '' ? '' : `: ${body.trim().slice(0, 200)}`}`);
    this.name = 'ConsulError';
  }
}

type PackageCall = (options: Record<string, unknown>) => Promise<unknown>;

/** The part of the package svc calls; its bundled typings lack `ctx`, `buffer`, `timeout`, `index` and `wait`. */
interface ConsulPackage {
  readonly kv: { readonly get: PackageCall; readonly keys: PackageCall; readonly set: PackageCall; readonly del: PackageCall };
  readonly health: { readonly service: PackageCall };
  readonly agent: { readonly service: { readonly register: PackageCall; readonly deregister: PackageCall } };
  readonly session: { readonly create: PackageCall; readonly renew: PackageCall; readonly destroy: PackageCall };
  readonly status: { readonly leader: PackageCall };
  destroy(): void;
}

interface Answer {
  readonly status: number;
  readonly index: number | null;
  readonly body: unknown;
}

export class ConsulClient {
  readonly #address: string;
  readonly #timeoutMs: number;
  readonly #consul: ConsulPackage;
  readonly #observe: CallObserver | undefined;

  constructor(options: ConsulClientOptions) {
    this.#address = options.address.replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#observe = options.observe;
    const token = options.token === undefined || options.token === '' ? undefined : { token: options.token };
    // No socket timeout while a call runs: it would cut blocking queries, which the calls' own timeouts bound.
    const agent = idleClosingAgent(
      this.#address.startsWith('https:') ? https.Agent : http.Agent,
      {
        keepAlive: true,
        maxSockets: options.maxSockets ?? 32,
      },
      options.idleSocketMs ?? 2000,
    );
    const settings = { baseUrl: `${this.#address}/v1`, defaults: token, agent };
    this.#consul = new Consul(settings as ConstructorParameters<typeof Consul>[0]) as unknown as ConsulPackage;
  }

  get address(): string {
    return this.#address;
  }

  /** `GET /v1/kv/<key>` (`?recurse` for a prefix): the entries, none on a 404. */
  async kvGet(key: string, options: ReadOptions & { readonly recurse?: boolean } = {}): Promise<Read<KvEntry[]>> {
    const answer = await this.#send(`GET /v1/kv/${key}`, options, (o) => this.#consul.kv.get(o), {
      key,
      buffer: true,
      recurse: options.recurse === true,
    });
    const body = answer.body;
    const entries = (body === undefined ? [] : Array.isArray(body) ? body : [body]) as (Omit<KvEntry, 'Value'> & {
      Value: Buffer | null;
    })[];
    return { index: answer.index, value: entries.map((entry) => ({ ...entry, Value: entry.Value ?? Buffer.alloc(0) })) };
  }

  /** `GET /v1/kv/<prefix>?keys[&separator=]`: the keys, none on a 404. */
  async kvKeys(prefix: string, options: ReadOptions & { readonly separator?: string } = {}): Promise<Read<string[]>> {
    try {
      const answer = await this.#send(`GET /v1/kv/${prefix}?keys`, options, (o) => this.#consul.kv.keys(o), {
        key: prefix,
        separator: options.separator,
      });
      return { index: answer.index, value: answer.body as string[] };
    } catch (error) {
      // Unlike kv.get, the package's kv.keys treats a 404 (no key under the prefix) as a failure.
      if (error instanceof ConsulError && error.status === 404) return { index: error.index, value: [] };
      throw error;
    }
  }

  /** `PUT /v1/kv/<key>` with `?cas`, `?acquire` or `?release`: whether Consul wrote it. */
  async kvSet(
    key: string,
    value: Buffer,
    options: CallOptions & { readonly cas?: number; readonly acquire?: string; readonly release?: string } = {},
  ): Promise<boolean> {
    const call = `PUT /v1/kv/${key}`;
    const answer = await this.#send(call, options, (o) => this.#consul.kv.set(o), {
      key,
      value,
      ...defined({ cas: options.cas, acquire: options.acquire, release: options.release }),
    });
    return booleanOf(answer, call);
  }

  /** `DELETE /v1/kv/<key>` with `?cas` or `?recurse`: whether Consul deleted it (an absent key counts). */
  async kvDelete(key: string, options: CallOptions & { readonly cas?: number; readonly recurse?: boolean } = {}): Promise<boolean> {
    const call = `DELETE /v1/kv/${key}`;
    const answer = await this.#send(call, options, (o) => this.#consul.kv.del(o), {
      key,
      recurse: options.recurse === true,
      ...defined({ cas: options.cas }),
    });
    return booleanOf(answer, call);
  }

  /** `GET /v1/health/service/<name>?passing`: the instances whose checks all pass. */
  async healthService(name: string, options: ReadOptions = {}): Promise<Read<HealthEntry[]>> {
    const answer = await this.#send(`GET /v1/health/service/${name}?passing`, options, (o) => this.#consul.health.service(o), {
      service: name,
      passing: true,
    });
    if (!Array.isArray(answer.body))
      throw new ConsulError(answer.status, bodyText(answer.body), `GET /v1/health/service/${name}`, answer.index);
    return { index: answer.index, value: answer.body as HealthEntry[] };
  }

  /** `PUT /v1/agent/service/register` on the local agent. */
  async registerService(service: ServiceDefinition, options: CallOptions = {}): Promise<void> {
    await this.#send('PUT /v1/agent/service/register', options, (o) => this.#consul.agent.service.register(o), {
      id: service.ID,
      name: service.Name,
      address: service.Address,
      port: service.Port,
      tags: [...service.Tags],
      meta: service.Meta,
    });
  }

  /** `PUT /v1/agent/service/deregister/<id>` on the local agent. */
  async deregisterService(id: string, options: CallOptions = {}): Promise<void> {
    await this.#send(`PUT /v1/agent/service/deregister/${id}`, options, (o) => this.#consul.agent.service.deregister(o), { id });
  }

  /** `PUT /v1/session/create`: the new session's ID. */
  async sessionCreate(
    session: { readonly name: string; readonly ttl: string; readonly behavior: 'release' | 'delete'; readonly lockDelay: string },
    options: CallOptions = {},
  ): Promise<string> {
    const answer = await this.#send('PUT /v1/session/create', options, (o) => this.#consul.session.create(o), { ...session });
    const id = (answer.body as { ID?: unknown } | undefined)?.ID;
    if (typeof id !== 'string' || id === '')
      throw new ConsulError(answer.status, bodyText(answer.body), 'PUT /v1/session/create (no ID)', answer.index);
    return id;
  }

  /** `PUT /v1/session/renew/<id>`; a session Consul no longer has is a `ConsulError` with status 404. */
  async sessionRenew(id: string, options: CallOptions = {}): Promise<void> {
    await this.#send(`PUT /v1/session/renew/${id}`, options, (o) => this.#consul.session.renew(o), { id });
  }

  /** `PUT /v1/session/destroy/<id>`: releases (or deletes) the keys it holds. */
  async sessionDestroy(id: string, options: CallOptions = {}): Promise<void> {
    await this.#send(`PUT /v1/session/destroy/${id}`, options, (o) => this.#consul.session.destroy(o), { id });
  }

  /** `GET /v1/status/leader`: the Raft leader's address, `''` while the cluster has none (it can serve no KV then). */
  async statusLeader(options: CallOptions = {}): Promise<string> {
    const answer = await this.#send('GET /v1/status/leader', options, (o) => this.#consul.status.leader(o), {});
    if (typeof answer.body !== 'string')
      throw new ConsulError(answer.status, bodyText(answer.body), 'GET /v1/status/leader (not a string)', answer.index);
    return answer.body;
  }

  /** Closes the kept-alive connections (calls still running fail). */
  close(): void {
    this.#consul.destroy();
  }

  /** Runs one package call with the response included, the signal wired to its `ctx`, and the timeout of a (blocking) call. */
  #send(call: string, options: ReadOptions, run: PackageCall, args: Record<string, unknown>): Promise<Answer> {
    const observe = this.#observe;
    // A blocking query waits on purpose: its time says nothing of Consul's.
    if (observe === undefined || options.block !== undefined) return this.#call(call, options, run, args);
    const [method, path] = call.split(' ') as [string, string];
    const operation = agentOperation(method, path);
    return timed(
      () => this.#call(call, options, run, args),
      (seconds, ok) => observe(operation, seconds, ok),
    );
  }

  /**
   * A read that meets a kept-alive connection the agent closed as it went out is sent once more, on
   * a new connection: a read asks nothing of Consul twice. Writes are never sent twice.
   */
  async #call(call: string, options: ReadOptions, run: PackageCall, args: Record<string, unknown>): Promise<Answer> {
    try {
      return await this.#callOnce(call, options, run, args);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (!call.startsWith('GET ') || options.signal?.aborted || typeof code !== 'string' || !STALE_CONNECTION.has(code)) throw error;
      return this.#callOnce(call, options, run, args);
    }
  }

  async #callOnce(call: string, options: ReadOptions, run: PackageCall, args: Record<string, unknown>): Promise<Answer> {
    const { signal, block } = options;
    signal?.throwIfAborted();
    const ctx = Object.assign(new EventEmitter(), { includeResponse: true });
    const cancel = (): boolean => ctx.emit('cancel');
    signal?.addEventListener('abort', cancel, { once: true });
    const timeout = this.#timeoutMs + (block === undefined ? 0 : block.waitMs + block.waitMs / 16);
    const blocking = block === undefined ? {} : { index: block.index, wait: `${Math.max(1, Math.round(block.waitMs))}ms` };
    try {
      const [response, body] = (await run({ ...args, ...blocking, ctx, timeout })) as [IncomingMessage, unknown?];
      return { status: response.statusCode ?? 0, index: indexOf(response), body };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const response = (error as { response?: IncomingMessage & { body?: unknown } }).response;
      if (response !== undefined) throw new ConsulError(response.statusCode ?? 0, bodyText(response.body), call, indexOf(response));
      throw error;
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  }
}

/** Errors of a kept-alive connection closed by the agent as the request went out. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE']);

/**
 * An agent whose unused kept-alive connections close after `idleMs`. Node keeps them for ever
 * by default; a call's own `setTimeout` replaces this one while the connection is in use.
 */
function idleClosingAgent(Base: typeof http.Agent, options: http.AgentOptions, idleMs: number): http.Agent {
  class IdleClosingAgent extends Base {
    // Node's agent keeps the socket only when this returns true, though its typings say void.
    override keepSocketAlive(socket: Duplex): boolean {
      const kept = super.keepSocketAlive(socket) as unknown as boolean;
      // Node's agent destroys a free socket whose time-out fires.
      if (kept) (socket as Socket).setTimeout(idleMs);
      return kept;
    }
  }
  return new IdleClosingAgent(options);
}

/** The options whose value is set: the package sends a present key even when its value is undefined (`?cas=`). */
function defined(options: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

function indexOf(response: IncomingMessage): number | null {
  const raw = response.headers['x-consul-index'];
  return typeof raw === 'string' && /^\d+$/.test(raw) && Number(raw) > 0 ? Number(raw) : null;
}

function booleanOf(answer: Answer, call: string): boolean {
  if (typeof answer.body !== 'boolean')
    throw new ConsulError(answer.status, `${bodyText(answer.body)} (not true or false)`, call, answer.index);
  return answer.body;
}

function bodyText(body: unknown): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  return JSON.stringify(body);
}
