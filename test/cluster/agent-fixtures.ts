/**
 * Turns a recorder's log into the fixtures of test/fixtures/agents/: the
 * exchanges grouped by request kind (method, path template, the query
 * parameters that change the answer, blocking or not), a few per kind and
 * every distinct status or error text, plus what those need to be replayed
 * in order on a fresh stand-in (test/standins/replay.test.ts): the answers
 * their IDs and indexes came from, and the last write to what they read.
 * Each run is one scenario of the file, replaced when recorded again.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { happenedAt, type Exchange, type Payload } from './recorder.js';

export type AgentName = 'nomad' | 'consul';

export interface Scenario {
  readonly name: string;
  /** The agent's `version` line. */
  readonly version: string;
  /** Kind → its kept exchanges (`happenedAt` orders them across kinds and agents). */
  readonly kinds: Record<string, Exchange[]>;
}

export interface AgentFixture {
  readonly agent: AgentName;
  readonly scenarios: Scenario[];
}

const FIRST_PER_KIND = 2;
/** Query parameters that do not change what kind of answer comes back. */
const NOISE = new Set(['namespace', 'region', 'index', 'wait', 'token', 'stale', 'consistent', 'dc']);
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** `GET /v1/job/:id/allocations (blocking)`, `PUT /v1/kv/:key?cas`, … */
export function kindOf(agent: AgentName, method: string, target: string): string {
  const [rawPath = '', search = ''] = target.split('?', 2);
  const template =
    agent === 'nomad'
      ? rawPath
          .replace(/^\/v1\/(job|allocation|evaluation|deployment|node|scaling\/policy)\/[^/]+/, '/v1/$1/:id')
          .replace(/^\/v1\/client\/fs\/logs\/[^/]+/, '/v1/client/fs/logs/:alloc')
          .replace(/^\/v1\/var\/.+$/, '/v1/var/:path')
      : rawPath
          .replace(/^\/v1\/kv\/.*$/, '/v1/kv/:key')
          .replace(/^\/v1\/session\/(renew|destroy|info)\/.+$/, '/v1/session/$1/:id')
          .replace(/^\/v1\/health\/service\/.+$/, '/v1/health/service/:name')
          .replace(/^\/v1\/agent\/service\/deregister\/.+$/, '/v1/agent/service/deregister/:id');
  const params = new URLSearchParams(search);
  const names = [...new Set([...params.keys()].filter((name) => !NOISE.has(name)))].sort();
  const blocking = Number(params.get('index') ?? 0) > 0;
  return `${method} ${template}${names.length > 0 ? `?${names.join('&')}` : ''}${blocking ? ' (blocking)' : ''}`;
}

/** What makes an answer new for its kind: its status and error text (IDs and numbers masked), or the form of its body. */
function signature(exchange: Exchange): string {
  const ok = exchange.status >= 200 && exchange.status < 300;
  if (!ok) return `${exchange.status} ${textOf(exchange.body).replace(UUID, '<id>').replace(/\d+/g, '<n>')}`;
  const body = exchange.body;
  if (body === undefined) return `${exchange.status} empty`;
  if (!('json' in body)) return `${exchange.status} ${'text' in body ? 'text' : 'bytes'}`;
  const value = body.json;
  if (Array.isArray(value)) return `${exchange.status} ${value.length === 0 ? '[]' : '[…]'}`;
  return `${exchange.status} ${value === null ? 'null' : typeof value === 'object' ? '{}' : JSON.stringify(value)}`;
}

function textOf(payload: Payload | undefined): string {
  if (payload === undefined) return '';
  if ('text' in payload) return payload.text;
  return 'json' in payload ? JSON.stringify(payload.json) : '<bytes>';
}

/** The resource an exchange reads or writes (`job:<id>`, `kv:<key>`, `session:<id>`…), and whether it reads a prefix of them. */
function resourceOf(agent: AgentName, exchange: Exchange): { name: string; prefix: boolean } | null {
  const [rawPath = '', search = ''] = exchange.path.split('?', 2);
  const query = new URLSearchParams(search);
  const decoded = decodeURIComponent(rawPath);
  let m: RegExpExecArray | null;
  if (agent === 'nomad') {
    if ((m = /^\/v1\/job\/([^/]+)/.exec(rawPath))) return { name: `job:${decodeURIComponent(m[1]!)}`, prefix: false };
    if ((m = /^\/v1\/var\/(.+)$/.exec(rawPath))) return { name: `var:${decodeURIComponent(m[1]!)}`, prefix: false };
    if (rawPath === '/v1/jobs') {
      const job = exchange.method === 'GET' ? null : (json(exchange.request) as { Job?: { ID?: string } } | undefined)?.Job?.ID;
      return job ? { name: `job:${job}`, prefix: false } : { name: `job:${query.get('prefix') ?? ''}`, prefix: true };
    }
    return null;
  }
  if ((m = /^\/v1\/kv\/(.*)$/.exec(decoded))) return { name: `kv:${m[1]}`, prefix: query.has('recurse') || query.has('keys') };
  if ((m = /^\/v1\/session\/(?:renew|destroy|info)\/(.+)$/.exec(decoded))) return { name: `session:${m[1]}`, prefix: false };
  if ((m = /^\/v1\/health\/service\/(.+)$/.exec(decoded))) return { name: `service:${m[1]}`, prefix: false };
  if (decoded === '/v1/agent/service/register')
    return { name: `service:${(json(exchange.request) as { Name?: string } | undefined)?.Name ?? ''}`, prefix: false };
  return null;
}

function json(payload: Payload | undefined): unknown {
  return payload !== undefined && 'json' in payload ? payload.json : undefined;
}

function succeeded(exchange: Exchange): boolean {
  return exchange.status >= 200 && exchange.status < 300 && json(exchange.body) !== false;
}

/** The indexes a request carries that must come from an earlier answer: `cas=`, and `JobModifyIndex` with `EnforceIndex`. */
function indexesIn(exchange: Exchange): number[] {
  const query = new URLSearchParams(exchange.path.split('?', 2)[1] ?? '');
  const out: number[] = [];
  const cas = Number(query.get('cas') ?? 0);
  if (cas > 0) out.push(cas);
  const body = json(exchange.request) as { EnforceIndex?: boolean; JobModifyIndex?: number } | undefined;
  if (body?.EnforceIndex === true && (body.JobModifyIndex ?? 0) > 0) out.push(body.JobModifyIndex!);
  return out;
}

/** Whether `value` appears in the exchange's answer: as its index header, or under a key ending in `Index`. */
function answersIndex(exchange: Exchange, value: number): boolean {
  if (Object.entries(exchange.headers).some(([name, v]) => name.endsWith('-Index') && Number(v) === value)) return true;
  const walk = (node: unknown): boolean => {
    if (Array.isArray(node)) return node.some(walk);
    if (node === null || typeof node !== 'object') return false;
    return Object.entries(node).some(([key, v]) => (key.endsWith('Index') && v === value) || walk(v));
  };
  return walk(json(exchange.body));
}

/** The earlier exchanges each one needs on a fresh stand-in to be answered as it was (by position in the log). */
function needs(agent: AgentName, log: readonly Exchange[]): (at: number) => number[] {
  const answers = log.map((e) => textOf(e.body));
  const resources = log.map((e) => resourceOf(agent, e));
  return (at) => {
    const exchange = log[at]!;
    const out = new Set<number>();
    // IDs (allocations, sessions, evaluations) come from the first answer that named them.
    for (const id of new Set(`${exchange.path} ${textOf(exchange.request)}`.match(UUID) ?? [])) {
      const from = answers.findIndex((text, i) => i < at && text.includes(id));
      if (from !== -1) out.add(from);
    }
    for (const index of indexesIn(exchange)) {
      const from = log.findLastIndex((e, i) => i < at && answersIndex(e, index));
      if (from !== -1) out.add(from);
    }
    const resource = resources[at];
    if (resource) {
      const from = log.findLastIndex((e, i) => {
        const written = resources[i];
        if (i >= at || !written || e.method === 'GET' || !succeeded(e)) return false;
        if (!resource.prefix) return written.name === resource.name;
        // A listing needs something under its prefix: the last write there that created, not deleted.
        return e.method !== 'DELETE' && written.name.startsWith(resource.name);
      });
      if (from !== -1) out.add(from);
    }
    return [...out];
  };
}

/** The exchanges to keep: the first of each kind, each new signature, and what they need, transitively. */
export function selectExchanges(agent: AgentName, recorded: readonly Exchange[]): Exchange[] {
  const log = [...recorded].sort((a, b) => happenedAt(a) - happenedAt(b));
  const seen = new Map<string, { count: number; signatures: Set<string> }>();
  const wanted: number[] = [];
  log.forEach((exchange, at) => {
    const kind = kindOf(agent, exchange.method, exchange.path);
    const known = seen.get(kind) ?? { count: 0, signatures: new Set<string>() };
    seen.set(kind, known);
    const sig = signature(exchange);
    if (known.count < FIRST_PER_KIND || !known.signatures.has(sig)) wanted.push(at);
    known.count += 1;
    known.signatures.add(sig);
  });
  const needed = needs(agent, log);
  const kept = new Set<number>();
  const visit = (at: number): void => {
    if (kept.has(at)) return;
    kept.add(at);
    for (const need of needed(at)) visit(need);
  };
  for (const at of wanted) visit(at);
  return [...kept].sort((a, b) => a - b).map((at) => log[at]!);
}

/** svc's values in Consul KV are its state: the fixtures keep their size, not their content. */
export function withoutKvValues(exchange: Exchange): Exchange {
  if (!exchange.path.startsWith('/v1/kv/')) return exchange;
  const request =
    exchange.request === undefined ? undefined : { text: `<svc value of about ${Buffer.byteLength(textOf(exchange.request))} bytes>` };
  const answer = json(exchange.body);
  const body = Array.isArray(answer)
    ? {
        json: answer.map((entry: Record<string, unknown>) =>
          typeof entry?.Value === 'string'
            ? { ...entry, Value: Buffer.from(`<svc value of ${Buffer.from(entry.Value, 'base64').length} bytes>`).toString('base64') }
            : entry,
        ),
      }
    : exchange.body;
  const { request: _request, body: _body, ...rest } = exchange;
  return { ...rest, ...(request === undefined ? {} : { request }), ...(body === undefined ? {} : { body }) };
}

/** Secret values in Nomad Variables (workloads' secrets): the fixtures keep each item's size, not its value. */
export function withoutVariableValues(exchange: Exchange): Exchange {
  if (!exchange.path.startsWith('/v1/var/')) return exchange;
  const hide = (payload: Payload | undefined): Payload | undefined => {
    const value = json(payload) as { Items?: Record<string, string> } | undefined;
    if (value === undefined || value === null || typeof value !== 'object' || value.Items === undefined) return payload;
    return {
      json: {
        ...value,
        Items: Object.fromEntries(Object.entries(value.Items).map(([key, item]) => [key, `<value of ${Buffer.byteLength(item)} bytes>`])),
      },
    };
  };
  const { request, body, ...rest } = exchange;
  const hiddenRequest = hide(request);
  const hiddenBody = hide(body);
  return {
    ...rest,
    ...(hiddenRequest === undefined ? {} : { request: hiddenRequest }),
    ...(hiddenBody === undefined ? {} : { body: hiddenBody }),
  };
}

const written = new Set<string>();

/** Adds (or replaces) the scenario `name` in `<dir>/<agent>.json`; a second run of the same name in one process is kept beside the first. */
export function writeScenario(dir: string, agent: AgentName, name: string, version: string, log: readonly Exchange[]): void {
  const file = path.join(dir, `${agent}.json`);
  mkdirSync(dir, { recursive: true });
  const fixture: AgentFixture = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as AgentFixture) : { agent, scenarios: [] };
  let unique = name;
  for (let n = 2; written.has(`${file}\0${unique}`); n += 1) unique = `${name}-${n}`;
  written.add(`${file}\0${unique}`);
  const kinds: Record<string, Exchange[]> = {};
  for (const exchange of selectExchanges(agent, log))
    (kinds[kindOf(agent, exchange.method, exchange.path)] ??= []).push(withoutVariableValues(withoutKvValues(exchange)));
  const scenarios = [...fixture.scenarios.filter((s) => s.name !== unique), { name: unique, version, kinds }];
  writeFileSync(file, `${JSON.stringify({ agent, scenarios }, null, 1)}\n`);
}
