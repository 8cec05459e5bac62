/**
 * `GET|HEAD /v2/<name>/blobs/<digest>` (registry/handlers/blob.go and
 * registry/storage/blobserver.go): 200 with Content-Length,
 * Docker-Content-Digest, `Content-Type: application/octet-stream`, ETag and
 * a year's Cache-Control; single byte ranges as Go's http.ServeContent
 * serves them (206 / 416); 404 BLOB_UNKNOWN when the repository has no such
 * blob. With `redirectBlobs`, GET answers 307 to `/cdn/<key>` on the same
 * server (as a storage driver's RedirectURL does: a presigned URL that needs
 * no Authorization). DELETE is UNSUPPORTED: distribution's default
 * (`storage.delete.enabled: false`).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Call, RegistryContext } from './context.js';
import { registryError } from './errors.js';
import { parseDigest } from './names.js';
import { methodNotAllowed } from './methods.js';

const CACHE_CONTROL = `max-age=${365 * 24 * 60 * 60}`;
/** How long a redirect target stays valid (presigned URLs expire too). */
const REDIRECT_TTL_MS = 20 * 60_000;
export const REDIRECT_PREFIX = '/cdn/';

interface RedirectTarget {
  readonly digest: string;
  readonly bytes: Buffer;
  readonly expiresAt: number;
}

export class BlobHandler {
  private readonly redirects = new Map<string, RedirectTarget>();

  constructor(private readonly context: RegistryContext) {}

  handle(call: Call, name: string, rawDigest: string): void {
    if (call.method !== 'GET' && call.method !== 'HEAD') {
      if (call.method === 'DELETE') throw registryError('UNSUPPORTED');
      return methodNotAllowed(call, ['GET', 'HEAD', 'DELETE']);
    }
    const digest = parseDigest(rawDigest);
    const bytes = this.context.store.blob(name, digest);
    if (bytes === undefined) throw registryError('BLOB_UNKNOWN', digest);
    if (call.method === 'GET') this.context.stats.blobGets += 1;
    if (call.method === 'GET' && this.context.redirectBlobs) return this.redirect(call, digest, bytes);
    serveBytes(call.req, call.res, bytes, {
      ETag: `"${digest}"`,
      'Cache-Control': CACHE_CONTROL,
      'Docker-Content-Digest': digest,
      'Content-Type': 'application/octet-stream',
    });
  }

  /** `GET /cdn/<key>`: the redirect target; no registry headers, no authentication. */
  handleRedirectTarget(req: IncomingMessage, res: ServerResponse, key: string): void {
    const target = this.redirects.get(key);
    if (target === undefined || target.expiresAt <= Date.now() || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    serveBytes(req, res, target.bytes, { ETag: `"${target.digest}"`, 'Content-Type': 'application/octet-stream' });
  }

  /** Go's http.Redirect: 307 with Location and a short HTML body. */
  private redirect(call: Call, digest: string, bytes: Buffer): void {
    const key = randomBytes(18).toString('base64url');
    this.redirects.set(key, { digest, bytes, expiresAt: Date.now() + REDIRECT_TTL_MS });
    const location = `${this.context.baseUrl()}${REDIRECT_PREFIX}${key}`;
    const body = `<a href="${location}">Temporary Redirect</a>.\n\n`;
    call.res
      .writeHead(307, { Location: location, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(body) })
      .end(body);
  }
}

/** The bytes, honouring one `Range: bytes=a-b` (or `a-`, `-n`) as http.ServeContent does. */
function serveBytes(req: IncomingMessage, res: ServerResponse, bytes: Buffer, headers: Record<string, string>): void {
  const size = bytes.length;
  res.setHeader('Accept-Ranges', 'bytes');
  for (const [key, value] of Object.entries(headers)) res.setHeader(key, value);
  const range = req.headers.range;
  if (range !== undefined) {
    const parsed = parseRange(range, size);
    if (parsed === 'unsatisfiable') {
      const text = 'invalid range: failed to overlap\n';
      res
        .writeHead(416, {
          'Content-Range': `bytes */${size}`,
          'Content-Type': 'text/plain; charset=utf-8',
          'Content-Length': Buffer.byteLength(text),
        })
        .end(text);
      return;
    }
    if (parsed !== undefined) {
      const [start, end] = parsed;
      res.writeHead(206, { 'Content-Range': `bytes ${start}-${end}/${size}`, 'Content-Length': end - start + 1 });
      res.end(req.method === 'HEAD' ? undefined : bytes.subarray(start, end + 1));
      return;
    }
  }
  res.writeHead(200, { 'Content-Length': size });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

/** `undefined` = ignore the header (malformed or several ranges: the stand-in then serves everything). */
function parseRange(header: string, size: number): [number, number] | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (match === null || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    return [Math.max(0, size - suffix), size - 1];
  }
  const start = Number(match[1]);
  if (start >= size) return 'unsatisfiable';
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (end < start) return undefined;
  return [start, end];
}
