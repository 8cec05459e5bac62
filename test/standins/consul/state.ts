/**
 * The data of the Consul stand-in: one raft-like index that every write
 * consumes, and Consul's per-table indexes that reads report
 * (`X-Consul-Index`). Every write notifies the pending blocking queries,
 * which re-run and return once their own index passed the client's — the
 * model of Consul's `blockingQuery` loop (agent/consul/rpc.go).
 */
import { randomUUID } from 'node:crypto';

export interface KvEntry {
  Key: string;
  Value: Buffer;
  Flags: number;
  Session: string;
  LockIndex: number;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface Session {
  ID: string;
  Name: string;
  Node: string;
  LockDelayMs: number;
  Behavior: 'release' | 'delete';
  TTL: string;
  NodeChecks: string[];
  ServiceChecks: { ID: string; Namespace: string }[];
  CreateIndex: number;
  ModifyIndex: number;
}

export type CheckStatus = 'passing' | 'warning' | 'critical';

export interface Check {
  CheckID: string;
  Name: string;
  Status: CheckStatus;
  Notes: string;
  Output: string;
  ServiceID: string;
  ServiceName: string;
  ServiceTags: string[];
  Type: string;
  Interval: string;
  Timeout: string;
  Definition: Record<string, unknown>;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface Service {
  ID: string;
  Service: string;
  Tags: string[];
  Address: string;
  Meta: Record<string, string>;
  Port: number;
  Weights: { Passing: number; Warning: number };
  EnableTagOverride: boolean;
  CreateIndex: number;
  ModifyIndex: number;
}

export const NODE_NAME = 'standin';
export const NODE_ADDRESS = '127.0.0.1';
export const DATACENTER = 'dc1';

/** What `snapshot()` captures and `restore()` puts back. */
export interface Snapshot {
  raft: number;
  tables: Map<string, number>;
  kv: Map<string, KvEntry>;
  tombstones: Map<string, number>;
  sessions: Map<string, Session>;
  services: Map<string, Service>;
  checks: Map<string, Check>;
}

export class ConsulState {
  readonly nodeId = randomUUID();
  readonly nodeCreateIndex: number;
  /** The raft index: every applied write takes the next one. */
  raft = 0;
  /** Consul's index table: table name (or `service.<name>`) → index of its last change. */
  tables = new Map<string, number>();
  kv = new Map<string, KvEntry>();
  /** The KV graveyard: deleted key → index of the delete. */
  tombstones = new Map<string, number>();
  sessions = new Map<string, Session>();
  services = new Map<string, Service>();
  checks = new Map<string, Check>();
  /** Key → time (ms) before which `?acquire` is refused (lock-delay). */
  readonly lockDelays = new Map<string, number>();
  readonly #listeners = new Set<() => void>();

  constructor() {
    this.nodeCreateIndex = this.apply();
    this.touch('nodes', this.nodeCreateIndex);
    this.checks.set('serfHealth', {
      CheckID: 'serfHealth',
      Name: 'Serf Health Status',
      Status: 'passing',
      Notes: '',
      Output: 'Agent alive and reachable',
      ServiceID: '',
      ServiceName: '',
      ServiceTags: [],
      Type: '',
      Interval: '',
      Timeout: '',
      Definition: {},
      CreateIndex: this.nodeCreateIndex,
      ModifyIndex: this.nodeCreateIndex,
    });
    this.touch('checks', this.nodeCreateIndex);
  }

  /** Takes the next raft index (a write was applied, whether or not it changed anything). */
  apply(): number {
    this.raft += 1;
    return this.raft;
  }

  touch(table: string, index: number): void {
    this.tables.set(table, index);
  }

  table(...names: string[]): number {
    return Math.max(0, ...names.map((name) => this.tables.get(name) ?? 0));
  }

  /** Wakes the blocking queries (call after every write). */
  changed(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  snapshot(): Snapshot {
    const clone = <T extends object>(map: Map<string, T>): Map<string, T> => new Map([...map].map(([k, v]) => [k, structuredClone(v)]));
    return {
      raft: this.raft,
      tables: new Map(this.tables),
      kv: new Map([...this.kv].map(([k, v]) => [k, { ...v, Value: Buffer.from(v.Value) }])),
      tombstones: new Map(this.tombstones),
      sessions: clone(this.sessions),
      services: clone(this.services),
      checks: clone(this.checks),
    };
  }

  restore(snapshot: Snapshot): void {
    this.raft = snapshot.raft;
    this.tables = new Map(snapshot.tables);
    this.kv = new Map([...snapshot.kv].map(([k, v]) => [k, { ...v, Value: Buffer.from(v.Value) }]));
    this.tombstones = new Map(snapshot.tombstones);
    this.sessions = new Map([...snapshot.sessions].map(([k, v]) => [k, structuredClone(v)]));
    this.services = new Map([...snapshot.services].map(([k, v]) => [k, structuredClone(v)]));
    this.checks = new Map([...snapshot.checks].map(([k, v]) => [k, structuredClone(v)]));
    this.changed();
  }

  // ---- KV (agent/consul/state/kvs.go) ----

  /** `kvsMaxIndex`: the index of the kvs and tombstones tables. */
  kvTableIndex(): number {
    return this.table('kvs', 'tombstones');
  }

  /** `kvsListTxn`'s index: max ModifyIndex under the prefix and of its tombstones, else the table index. */
  kvPrefixIndex(prefix: string): number {
    if (prefix === '') return this.kvTableIndex();
    let index = 0;
    for (const entry of this.kv.values()) if (entry.Key.startsWith(prefix) && entry.ModifyIndex > index) index = entry.ModifyIndex;
    for (const [key, at] of this.tombstones) if (key.startsWith(prefix) && at > index) index = at;
    return index === 0 ? this.kvTableIndex() : index;
  }

  kvUnder(prefix: string): KvEntry[] {
    return [...this.kv.values()]
      .filter((e) => e.Key.startsWith(prefix))
      .sort((a, b) => Buffer.compare(Buffer.from(a.Key), Buffer.from(b.Key)));
  }

  kvSet(index: number, entry: Omit<KvEntry, 'CreateIndex' | 'ModifyIndex'> & { CreateIndex?: number }): void {
    const existing = this.kv.get(entry.Key);
    this.kv.set(entry.Key, { ...entry, CreateIndex: entry.CreateIndex ?? existing?.CreateIndex ?? index, ModifyIndex: index });
    this.tombstones.delete(entry.Key);
    this.touch('kvs', index);
  }

  kvDelete(index: number, key: string): boolean {
    if (!this.kv.delete(key)) return false;
    this.tombstones.set(key, index);
    this.touch('kvs', index);
    this.touch('tombstones', index);
    return true;
  }

  // ---- Catalog (agent/consul/state/catalog.go) ----

  /** Bumps the index of a service name (`service.<name>`), or records its extinction when it has no instance left. */
  touchService(name: string, index: number): void {
    this.touch('services', index);
    if ([...this.services.values()].some((s) => s.Service === name)) this.touch(`service.${name}`, index);
    else {
      this.tables.delete(`service.${name}`);
      this.touch('service_last_extinction', index);
    }
  }

  /** `maxIndexForService`: the service's own index, else the last extinction, else the catalog's. */
  serviceIndex(name: string): number {
    const own = this.tables.get(`service.${name}`);
    if (own !== undefined && [...this.services.values()].some((s) => s.Service === name)) return own;
    const extinct = this.tables.get('service_last_extinction');
    if (extinct !== undefined) return extinct;
    return this.table('nodes', 'services', 'checks');
  }
}
