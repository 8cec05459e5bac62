/**
 * A recording HTTP proxy between svc and one real agent (Nomad or Consul),
 * for the fixtures of test/fixtures/agents/: every request is forwarded as
 * it came (bodies streamed both ways, no timeout of its own, so blocking
 * queries block as long as the agent holds them), and each finished exchange
 * is kept: method, path and query, request body, status, the headers svc
 * reads and the answer's body. Tokens are never kept: the token headers are
 * reduced to a label naming whose token it was (`tokens`), and secret-looking
 * JSON fields are redacted.
 */
import { createServer, request, Agent, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/** A body as recorded: JSON when it parses as JSON, else UTF-8 text, else base64. */
export type Payload = { readonly json: unknown } | { readonly text: string } | { readonly base64: string };

export interface Exchange {
  /** When the answer ended, on the counter the recorders of one cluster share (Nomad's and Consul's). */
  readonly seq: number;
  /** When the request came in, on the same counter. */
  readonly sent: number;
  readonly method: string;
  /** Path and query as sent, `token=` dropped. */
  readonly path: string;
  /** Whose token came with the request (a label of `tokens`, `unknown` for any other); absent: none. */
  readonly token?: string;
  readonly request?: Payload;
  readonly status: number;
  /** The answer headers svc reads, by their canonical names. */
  readonly headers: Record<string, string>;
  readonly body?: Payload;
}

/** The answer headers svc's clients read. */
export const READ_HEADERS = [
  'X-Nomad-Index',
  'X-Nomad-KnownLeader',
  'X-Nomad-LastContact',
  'X-Consul-Index',
  'X-Consul-KnownLeader',
  'X-Consul-LastContact',
  'Content-Type',
];
const TOKEN_HEADERS = ['x-consul-token', 'x-nomad-token', 'authorization'];
/** JSON fields that hold a secret (ACL SecretIDs, tokens a job may carry): their value is replaced. */
const SECRET_FIELD = /(SecretID|Token|Secret|Password)$/i;
const KEEP_BYTES = 1 << 20;

/**
 * When the agent acted on an exchange, for replaying in order: a read at its
 * answer (a blocking query answers after the write that woke it began, and
 * before that write's own answer may come back), a write when it came in.
 */
export function happenedAt(exchange: Exchange): number {
  return exchange.method === 'GET' ? exchange.seq : exchange.sent;
}

export interface Recorder {
  /** Where svc should send its requests. */
  readonly url: string;
  readonly exchanges: Exchange[];
  close(): Promise<void>;
}

export interface RecorderOptions {
  /** Secret → label, so the fixtures say whose token a request carried without holding it. */
  readonly tokens?: ReadonlyMap<string, string>;
  /** Shared between recorders whose exchanges are to be ordered together. */
  readonly counter?: { next: number };
}

export async function startRecorder(target: string, options: RecorderOptions = {}): Promise<Recorder> {
  const upstream = new URL(target);
  const counter = options.counter ?? { next: 0 };
  const exchanges: Exchange[] = [];
  // Keep-alive to the agent, and no socket timeout: a blocking query holds its connection for its wait.
  const agent = new Agent({ keepAlive: true });

  const server = createServer((req, res) => {
    const arrived = counter.next++;
    const sent: Buffer[] = [];
    const forward = request({
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      agent,
      headers: { ...req.headers, host: upstream.host },
    });
    req.on('data', (chunk: Buffer) => sent.push(chunk));
    req.pipe(forward);
    // svc gave up (a blocking query cancelled): so does the proxy, and nothing is recorded.
    res.on('close', () => {
      if (!res.writableFinished) forward.destroy();
    });
    // The agent is gone: svc sees its connection cut, as it would without the proxy.
    forward.on('error', () => req.socket.destroy());
    forward.on('response', (answer: IncomingMessage) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      const received: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => received.push(chunk));
      answer.pipe(res);
      answer.on('end', () => {
        exchanges.push(exchange(counter.next++, arrived, req, Buffer.concat(sent), answer, Buffer.concat(received), options.tokens));
      });
    });
  });
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

function exchange(
  seq: number,
  arrived: number,
  req: IncomingMessage,
  sent: Buffer,
  answer: IncomingMessage,
  received: Buffer,
  tokens?: ReadonlyMap<string, string>,
): Exchange {
  const headers: Record<string, string> = {};
  for (const name of READ_HEADERS) {
    const value = answer.headers[name.toLowerCase()];
    if (typeof value === 'string') headers[name] = value;
  }
  const token = tokenLabel(req.headers, tokens);
  const request = payload(sent);
  const body = payload(decoded(received, answer.headers['content-encoding']));
  return {
    seq,
    sent: arrived,
    method: req.method ?? 'GET',
    path: withoutToken(req.url ?? '/'),
    ...(token === undefined ? {} : { token }),
    ...(request === undefined ? {} : { request }),
    status: answer.statusCode ?? 0,
    headers,
    ...(body === undefined ? {} : { body }),
  };
}

/** The answer as svc reads it: Nomad gzips its answers to clients that accept it (fetch does). */
function decoded(bytes: Buffer, encoding: string | undefined): Buffer {
  if (bytes.length === 0) return bytes;
  if (encoding === 'gzip') return gunzipSync(bytes);
  if (encoding === 'deflate') return inflateSync(bytes);
  if (encoding === 'br') return brotliDecompressSync(bytes);
  return bytes;
}

function tokenLabel(headers: IncomingHttpHeaders, tokens?: ReadonlyMap<string, string>): string | undefined {
  for (const name of TOKEN_HEADERS) {
    const raw = headers[name];
    if (typeof raw !== 'string' || raw === '') continue;
    const secret = name === 'authorization' ? raw.replace(/^Bearer\s+/i, '') : raw;
    return tokens?.get(secret) ?? 'unknown';
  }
  return undefined;
}

function withoutToken(target: string): string {
  const at = target.indexOf('?');
  if (at === -1) return target;
  const query = target
    .slice(at + 1)
    .split('&')
    .filter((pair) => !/^token=/.test(pair));
  return query.length === 0 ? target.slice(0, at) : `${target.slice(0, at)}?${query.join('&')}`;
}

export function payload(bytes: Buffer): Payload | undefined {
  if (bytes.length === 0) return undefined;
  const kept = bytes.subarray(0, KEEP_BYTES);
  const text = kept.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(kept)) return { base64: kept.toString('base64') };
  try {
    return { json: redact(JSON.parse(text)) };
  } catch {
    return { text };
  }
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key, SECRET_FIELD.test(key) && typeof v === 'string' && v !== '' ? '<redacted>' : redact(v)]),
  );
}
