/**
 * `/v1/session/*` of the Consul stand-in, after agent/session_endpoint.go
 * and agent/consul/session_endpoint.go + session_ttl.go: create (defaults
 * LockDelay 15s, Behavior release, the node's serfHealth check; TTL 10s to
 * 86400s), renew, destroy, info, list. A TTL session that is not renewed is
 * invalidated after 2 × TTL (Consul's `SessionTTLMultiplier`); invalidation
 * releases (or deletes) the keys it holds and starts their lock-delay.
 */
import { randomUUID } from 'node:crypto';
import { durationField, formatGoDuration, jsonType, parseGoDuration, strictFields, stringField, stringList } from './go.js';
import { blockingQuery, HttpError, NOT_AN_ENDPOINT, sendJson, sendText, setMeta, type Call } from './http.js';
import { NODE_NAME, type ConsulState, type Session } from './state.js';
import type { Timers } from '../../helpers/manual-timers.js';

const TTL_MIN_MS = 10_000;
const TTL_MAX_MS = 86_400_000;
const MAX_LOCK_DELAY_MS = 60_000;
const TTL_MULTIPLIER = 2;

export class Sessions {
  readonly #timers = new Map<string, unknown>();

  /** `clock` runs the TTL timers: the real ones, or a test's (`ManualTimers`). */
  constructor(
    private readonly state: ConsulState,
    private readonly jitter: boolean,
    private readonly clock: Timers,
  ) {}

  handle(call: Call): void {
    const [, , , verb, id = ''] = call.path.split('/');
    const rest = call.path.split('/').slice(4).join('/');
    switch (verb) {
      case 'create':
        return this.#create(call);
      case 'destroy':
        return this.#withId(call, rest, () => this.#destroy(call, rest));
      case 'renew':
        return this.#withId(call, rest, () => this.#renew(call, rest));
      case 'info':
        return this.#withId(call, rest, () => this.#info(call, rest));
      case 'list':
        return this.#list(call);
      default:
        void id;
        throw new HttpError(404, NOT_AN_ENDPOINT);
    }
  }

  /** Stops the TTL timers (the stand-in is closing). */
  close(): void {
    for (const timer of this.#timers.values()) this.clock.clearTimeout(timer);
    this.#timers.clear();
  }

  #withId(call: Call, id: string, then: () => void): void {
    if (id === '') return sendText(call.res, 400, 'Missing session');
    then();
  }

  #create(call: Call): void {
    if (call.method !== 'PUT') throw new HttpError(405, `method ${call.method} not allowed`);
    const session: Session = {
      ID: randomUUID(),
      Name: '',
      Node: NODE_NAME,
      LockDelayMs: 15_000,
      Behavior: 'release',
      TTL: '',
      NodeChecks: ['serfHealth'],
      ServiceChecks: [],
      CreateIndex: 0,
      ModifyIndex: 0,
    };
    if (call.body.length > 0) {
      try {
        decodeSession(JSON.parse(call.body.toString('utf8')), session);
      } catch (error) {
        return sendText(call.res, 400, `Request decode failed: ${(error as Error).message}`);
      }
    }
    // Session.Apply (agent/consul/session_endpoint.go): errors are RPC errors, so 500.
    if (session.Node === '') throw new HttpError(500, 'Must provide Node');
    let ttlMs = 0;
    if (session.TTL !== '') {
      try {
        ttlMs = parseGoDuration(session.TTL);
      } catch (error) {
        throw new HttpError(500, `Session TTL '${session.TTL}' invalid: ${(error as Error).message}`);
      }
      if (ttlMs !== 0 && (ttlMs < TTL_MIN_MS || ttlMs > TTL_MAX_MS)) {
        throw new HttpError(
          500,
          `Invalid Session TTL '${Math.round(ttlMs * 1e6)}', must be between [${formatGoDuration(TTL_MIN_MS)}=${formatGoDuration(TTL_MAX_MS)}]`,
        );
      }
    }
    if (!['release', 'delete'].includes(session.Behavior)) throw new HttpError(500, `Invalid Behavior setting '${session.Behavior}'`);
    for (const check of session.NodeChecks) {
      if (!this.state.checks.has(check)) throw new HttpError(500, `Missing check '${check}' registration`);
    }
    const index = this.state.apply();
    session.CreateIndex = index;
    session.ModifyIndex = index;
    session.LockDelayMs = Math.min(session.LockDelayMs, MAX_LOCK_DELAY_MS);
    this.state.sessions.set(session.ID, session);
    this.state.touch('sessions', index);
    if (ttlMs > 0) this.#arm(session.ID, ttlMs);
    this.state.changed();
    sendJson(call.res, { ID: session.ID });
  }

  #arm(id: string, ttlMs: number): void {
    this.clock.clearTimeout(this.#timers.get(id));
    this.#timers.set(
      id,
      this.clock.setTimeout(() => this.invalidate(id), ttlMs * TTL_MULTIPLIER),
    );
  }

  #destroy(call: Call, id: string): void {
    if (call.method !== 'PUT') throw new HttpError(405, `method ${call.method} not allowed`);
    this.invalidate(id);
    sendJson(call.res, true);
  }

  #renew(call: Call, id: string): void {
    if (call.method !== 'PUT') throw new HttpError(405, `method ${call.method} not allowed`);
    const session = this.state.sessions.get(id);
    if (session === undefined) return sendText(call.res, 404, `Session id '${id}' not found`);
    if (session.TTL !== '') {
      const ttlMs = parseGoDuration(session.TTL);
      if (ttlMs > 0) this.#arm(id, ttlMs);
    }
    // A renew answers without query meta (agent/session_endpoint.go SessionRenew; Consul 1.21.4 answered so).
    sendJson(call.res, [render(session)]);
  }

  #info(call: Call, id: string): void {
    blockingQuery(
      call,
      this.state,
      this.jitter,
      () => ({ index: this.state.table('sessions'), result: this.state.sessions.get(id) }),
      (index, session) => {
        setMeta(call.res, index);
        sendJson(call.res, session === undefined ? [] : [render(session)]);
      },
    );
  }

  #list(call: Call): void {
    blockingQuery(
      call,
      this.state,
      this.jitter,
      () => ({ index: this.state.table('sessions'), result: [...this.state.sessions.values()] }),
      (index, sessions) => {
        setMeta(call.res, index);
        sendJson(call.res, sessions.map(render));
      },
    );
  }

  /** Destroys a session (`deleteSessionTxn`): its locks are released or their keys deleted, with lock-delay. */
  invalidate(id: string): void {
    this.clock.clearTimeout(this.#timers.get(id));
    this.#timers.delete(id);
    const index = this.state.apply();
    const session = this.state.sessions.get(id);
    if (session === undefined) return;
    this.state.sessions.delete(id);
    this.state.touch('sessions', index);
    const now = Date.now();
    for (const entry of [...this.state.kv.values()]) {
      if (entry.Session !== id) continue;
      if (session.Behavior === 'delete') this.state.kvDelete(index, entry.Key);
      else this.state.kvSet(index, { ...entry, Session: '' });
      if (session.LockDelayMs > 0) this.state.lockDelays.set(entry.Key, now + session.LockDelayMs);
    }
    this.state.changed();
  }
}

function render(session: Session): Record<string, unknown> {
  return {
    ID: session.ID,
    Name: session.Name,
    Node: session.Node,
    LockDelay: Math.round(session.LockDelayMs * 1e6),
    Behavior: session.Behavior,
    // No service checks is Go's nil slice: null (Consul 1.21.4 answered so).
    TTL: session.TTL,
    NodeChecks: session.NodeChecks,
    ServiceChecks: session.ServiceChecks.length === 0 ? null : session.ServiceChecks,
    CreateIndex: session.CreateIndex,
    ModifyIndex: session.ModifyIndex,
  };
}

/** The body of a session create; unknown fields are ignored, as Consul 1.21.4 does (its decoding is not strict there). */
function decodeSession(raw: unknown, session: Session): void {
  const fields = strictFields(
    raw,
    [
      'ID',
      'Name',
      'Node',
      'LockDelay',
      'Behavior',
      'TTL',
      'NodeChecks',
      'ServiceChecks',
      'Checks',
      'Namespace',
      'Partition',
      'CreateIndex',
      'ModifyIndex',
    ],
    {},
    'structs.Session',
    true,
  );
  if ('Name' in fields) session.Name = stringField(fields.Name, 'Session.Name') ?? '';
  if ('Node' in fields) session.Node = stringField(fields.Node, 'Session.Node') ?? '';
  if ('Behavior' in fields) session.Behavior = (stringField(fields.Behavior, 'Session.Behavior') ?? '') as Session['Behavior'];
  if (session.Behavior === ('' as Session['Behavior'])) session.Behavior = 'release';
  if ('TTL' in fields) session.TTL = stringField(fields.TTL, 'Session.TTL') ?? '';
  if ('LockDelay' in fields) {
    // FixupLockDelay: values under 1000 (ns, or a string duration) mean seconds.
    const value = fields.LockDelay;
    const ns = durationField(value, 'Session.LockDelay') * 1e6;
    session.LockDelayMs = (ns < 1000 ? ns * 1e9 : ns) / 1e6;
  }
  // FixupChecks: a Checks key (even empty) replaces the default serfHealth check.
  if ('Checks' in fields) session.NodeChecks = stringList(fields.Checks, 'Session.Checks') ?? [];
  if ('NodeChecks' in fields) session.NodeChecks = stringList(fields.NodeChecks, 'Session.NodeChecks') ?? [];
  if ('ServiceChecks' in fields) {
    const checks = fields.ServiceChecks;
    if (checks !== null && !Array.isArray(checks))
      throw new Error(
        `json: cannot unmarshal ${jsonType(checks)} into Go struct field Session.ServiceChecks of type []structs.ServiceCheck`,
      );
    session.ServiceChecks = ((checks ?? []) as unknown[]).map((c) => {
      const f = strictFields(c, ['ID', 'Namespace'], {}, 'structs.ServiceCheck');
      return { ID: stringField(f.ID, 'ServiceCheck.ID') ?? '', Namespace: stringField(f.Namespace, 'ServiceCheck.Namespace') ?? '' };
    });
  }
}
