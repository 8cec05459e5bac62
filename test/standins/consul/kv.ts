/**
 * `/v1/kv/<key>` of the Consul stand-in, after hashicorp/consul
 * agent/kvs_endpoint.go (key validation of the current source included) and
 * agent/consul/state/kvs.go (indexes, tombstones, lock semantics).
 */
import { parseGoUint } from './go.js';
import { blockingQuery, has, HttpError, sendJson, sendText, setMeta, type Call } from './http.js';
import type { ConsulState, KvEntry } from './state.js';

export interface KvOptions {
  /** `kv_max_value_size` (default 512 KiB). */
  readonly maxValueSize: number;
  readonly jitter: boolean;
  /** `validateKVKey` and the traversal check, which Consul has since 1.21.5; 1.21.4 (the fixtures' agent) takes any key. */
  readonly validateKeys: boolean;
}

const SUSPICIOUS = [
  '.js',
  '.css',
  '.html',
  '.htm',
  '.xml',
  '.json',
  '.txt',
  '.log',
  '.php',
  '.asp',
  '.jsp',
  '.cgi',
  '.pl',
  '.py',
  '.rb',
  '.sh',
  '.exe',
  '.dll',
  '.bat',
  '.cmd',
  '.com',
  '.scr',
  '.vbs',
  '.pdf',
  '.doc',
  '.docx',
  '.xls',
  '.xlsx',
  '.ppt',
  '.pptx',
  '.zip',
  '.rar',
  '.tar',
  '.gz',
  '.7z',
  '.bz2',
  '.jpg',
  '.jpeg',
  '.png',
  '.gif',
  '.svg',
  '.ico',
  '.bmp',
  '.mp3',
  '.mp4',
  '.avi',
  '.mov',
  '.wmv',
  '.flv',
  '.swf',
  '.woff',
  '.woff2',
  '.ttf',
  '.eot',
  '.otf',
];

/** `validateKVKey` (agent/kvs_endpoint.go). */
export function validateKvKey(key: string): string | null {
  if (key.startsWith('/')) return "key must not begin with a '/'";
  let position = 0;
  for (const char of key) {
    if (!/^[a-zA-Z0-9,\-_./]$/.test(char))
      return `key contains invalid character '${char}' at position ${position}. Only alphanumeric characters and ,-_./ are allowed`;
    position += Buffer.byteLength(char);
  }
  if (key.includes('../')) return 'key contains path traversal sequence';
  const lower = key.toLowerCase();
  const ext = SUSPICIOUS.find((e) => lower.endsWith(e));
  if (ext !== undefined) return `key contains suspicious file extension '${ext}' that may be cached by proxies`;
  return null;
}

function render(entry: KvEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {
    LockIndex: entry.LockIndex,
    Key: entry.Key,
    Flags: entry.Flags,
    Value: entry.Value.length === 0 ? null : entry.Value.toString('base64'),
    CreateIndex: entry.CreateIndex,
    ModifyIndex: entry.ModifyIndex,
  };
  if (entry.Session !== '') out.Session = entry.Session;
  return out;
}

function conflicting(call: Call, ...flags: string[]): boolean {
  if (flags.filter((flag) => has(call.query, flag)).length < 2) return false;
  // Go's url.Values.Encode: sorted by key.
  const sorted = new URLSearchParams([...call.query].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  sendText(call.res, 400, `Conflicting flags: ${sorted.toString()}\n`);
  return true;
}

function uintParam(call: Call, name: string): number {
  try {
    return parseGoUint(call.query.get(name) ?? '');
  } catch (error) {
    throw new HttpError(500, (error as Error).message);
  }
}

export function handleKv(call: Call, state: ConsulState, options: KvOptions): void {
  if (options.validateKeys && call.rawPath.includes('../')) throw new HttpError(400, 'URL path contains invalid traversal sequence');
  const key = call.path.slice('/v1/kv/'.length);
  if (options.validateKeys && key !== '') {
    const problem = validateKvKey(key);
    if (problem !== null) throw new HttpError(400, problem);
  }
  switch (call.method) {
    case 'GET':
      return has(call.query, 'keys') ? getKeys(call, state, key, options) : get(call, state, key, options);
    case 'PUT':
      return put(call, state, key, options);
    case 'DELETE':
      return del(call, state, key);
    default:
      call.res.setHeader('Allow', 'GET,PUT,DELETE');
      throw new HttpError(405, `method ${call.method} not allowed`);
  }
}

function get(call: Call, state: ConsulState, key: string, options: KvOptions): void {
  const recurse = has(call.query, 'recurse');
  if (!recurse && key === '') throw new HttpError(400, 'Missing key name');
  blockingQuery(
    call,
    state,
    options.jitter,
    () => {
      if (recurse) return { index: state.kvPrefixIndex(key), result: state.kvUnder(key) };
      const entry = state.kv.get(key);
      return { index: state.kvTableIndex(), result: entry === undefined ? [] : [entry] };
    },
    (index, entries) => {
      setMeta(call.res, index);
      if (entries.length === 0) {
        call.res.writeHead(404).end();
        return;
      }
      if (has(call.query, 'raw') && !recurse) {
        const value = entries[0]!.Value;
        call.res.writeHead(200, {
          'Content-Type': 'text/plain',
          'Content-Length': value.length,
          'X-Content-Type-Options': 'nosniff',
          'Content-Security-Policy': 'sandbox',
        });
        call.res.end(value);
        return;
      }
      sendJson(call.res, entries.map(render));
    },
  );
}

function getKeys(call: Call, state: ConsulState, prefix: string, options: KvOptions): void {
  const separator = call.query.get('separator') ?? call.query.get('seperator') ?? '';
  blockingQuery(
    call,
    state,
    options.jitter,
    () => {
      const keys: string[] = [];
      for (const entry of state.kvUnder(prefix)) {
        const at = separator === '' ? -1 : entry.Key.indexOf(separator, prefix.length);
        const shown = at === -1 ? entry.Key : entry.Key.slice(0, at + separator.length);
        if (keys[keys.length - 1] !== shown) keys.push(shown);
      }
      return { index: state.kvPrefixIndex(prefix), result: keys };
    },
    (index, keys) => {
      setMeta(call.res, index);
      if (keys.length === 0 && prefix !== '') {
        call.res.writeHead(404).end();
        return;
      }
      sendJson(call.res, keys);
    },
  );
}

function put(call: Call, state: ConsulState, key: string, options: KvOptions): void {
  if (key === '') throw new HttpError(400, 'Missing key name');
  if (conflicting(call, 'cas', 'acquire', 'release')) return;
  const flags = has(call.query, 'flags') ? uintParam(call, 'flags') : 0;
  const cas = has(call.query, 'cas') ? uintParam(call, 'cas') : undefined;
  const acquire = has(call.query, 'acquire') ? (call.query.get('acquire') ?? '') : undefined;
  const release = has(call.query, 'release') ? (call.query.get('release') ?? '') : undefined;
  const length = Number(call.req.headers['content-length'] ?? call.body.length);
  if (length > options.maxValueSize) {
    throw new HttpError(
      413,
      `Request body(${length} bytes) too large, max size: ${options.maxValueSize} bytes. See https://developer.hashicorp.com/docs/agent/config/config-files#kv_max_value_size.`,
    );
  }
  const value = Buffer.from(call.body);
  const existing = state.kv.get(key);

  if (acquire !== undefined || release !== undefined) {
    const session = (acquire ?? release)!;
    // KVS.Apply's errors come back through raft: "raft apply failed: <error>".
    if (session === '') throw new HttpError(500, 'raft apply failed: missing session');
    if (acquire !== undefined) {
      // KVS.Apply refuses a lock inside its lock-delay before it reaches raft.
      if ((state.lockDelays.get(key) ?? 0) > Date.now()) return sendJson(call.res, false);
      const index = state.apply();
      if (!state.sessions.has(session)) throw new HttpError(500, `raft apply failed: invalid session "${session}"`);
      if (existing !== undefined && existing.Session !== '' && existing.Session !== session) return sendJson(call.res, false);
      const lockIndex = existing === undefined ? 1 : existing.Session === session ? existing.LockIndex : existing.LockIndex + 1;
      state.kvSet(index, { Key: key, Value: value, Flags: flags, Session: session, LockIndex: lockIndex });
    } else {
      const index = state.apply();
      if (existing === undefined || existing.Session !== session) return sendJson(call.res, false);
      state.kvSet(index, { Key: key, Value: value, Flags: flags, Session: '', LockIndex: existing.LockIndex });
    }
    state.changed();
    return sendJson(call.res, true);
  }

  const index = state.apply();
  if (cas !== undefined) {
    const ok = cas === 0 ? existing === undefined : existing !== undefined && existing.ModifyIndex === cas;
    if (!ok) return sendJson(call.res, false);
  }
  // A plain set keeps the lock (session and lock index) of the existing entry.
  state.kvSet(index, { Key: key, Value: value, Flags: flags, Session: existing?.Session ?? '', LockIndex: existing?.LockIndex ?? 0 });
  state.changed();
  sendJson(call.res, true);
}

function del(call: Call, state: ConsulState, key: string): void {
  if (conflicting(call, 'recurse', 'cas')) return;
  const recurse = has(call.query, 'recurse');
  if (!recurse && key === '') throw new HttpError(400, 'Missing key name');
  const cas = has(call.query, 'cas') ? uintParam(call, 'cas') : undefined;
  const index = state.apply();
  if (recurse) {
    let any = false;
    for (const entry of state.kvUnder(key)) any = state.kvDelete(index, entry.Key) || any;
    if (any) state.changed();
    return sendJson(call.res, true);
  }
  if (cas !== undefined) {
    const existing = state.kv.get(key);
    // kvsDeleteCASTxn: an absent key is a successful no-op; otherwise the index must match.
    if (existing !== undefined && existing.ModifyIndex !== cas) return sendJson(call.res, false);
  }
  if (state.kvDelete(index, key)) state.changed();
  sendJson(call.res, true);
}
