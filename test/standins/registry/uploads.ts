/**
 * Blob uploads (registry/handlers/blobupload.go, spec.md "Pushing blobs"):
 *
 * - `POST /v2/<name>/blobs/uploads/` → 202, `Location` of the session,
 *   `Range: 0-0`, `Docker-Upload-UUID`.
 * - `POST …/uploads/?digest=<d>` with the bytes → 201 (the spec's optional
 *   single-POST upload; distribution ignores `digest` there and answers 202,
 *   which the spec also allows — clients must handle both).
 * - `POST …/uploads/?mount=<d>&from=<repo>` → 201 when `from` has the blob,
 *   else 202 and a fresh session.
 * - `PATCH <location>` appends (`Content-Range` start ≠ current size → 416
 *   RANGE_INVALID; Content-Length ≠ range length → 400 SIZE_INVALID) → 202
 *   with `Range: 0-<last>` and a new Location; `PUT <location>?digest=<d>`
 *   (optionally with the last bytes) → 201; bytes that do not match → 400
 *   DIGEST_INVALID and the session is gone; `GET` → 204 with Range;
 *   `DELETE` → 204.
 *
 * Like distribution, the Location carries `?_state=` (a signed {name, uuid,
 * offset}): PATCH/PUT/DELETE without a valid one are 404
 * BLOB_UPLOAD_INVALID, with one from before the last chunk 416
 * RANGE_INVALID; GET needs none. A session belongs to its repository.
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { readBody } from './body.js';
import { locationOf, type Call, type RegistryContext } from './context.js';
import { registryError } from './errors.js';
import { methodNotAllowed } from './methods.js';
import { NAME_PATTERN, parseDigest, isValidDigest } from './names.js';
import { sha256 } from './store.js';

interface UploadSession {
  readonly uuid: string;
  readonly name: string;
  readonly chunks: Buffer[];
  size: number;
}

interface UploadState {
  readonly Name: string;
  readonly UUID: string;
  readonly Offset: number;
}

export class UploadHandler {
  private readonly sessions = new Map<string, UploadSession>();
  private readonly secret = randomBytes(32);

  constructor(private readonly context: RegistryContext) {}

  /** `POST /v2/<name>/blobs/uploads/` */
  async start(call: Call, name: string): Promise<void> {
    if (call.method !== 'POST') return methodNotAllowed(call, ['POST']);
    const mount = call.query.get('mount') ?? '';
    const from = call.query.get('from') ?? '';
    if (mount !== '' && from !== '' && this.mount(call, name, mount, from)) return;
    if (call.query.has('digest')) return this.monolithic(call, name);
    // A session is opened whatever the POST carried (distribution does not read it).
    call.req.resume();
    const session: UploadSession = { uuid: randomUUID(), name, chunks: [], size: 0 };
    this.sessions.set(session.uuid, session);
    this.sessionHeaders(call, session);
    call.res.writeHead(202).end();
  }

  /** `GET|HEAD|PATCH|PUT|DELETE /v2/<name>/blobs/uploads/<uuid>` */
  async resume(call: Call, name: string, uuid: string): Promise<void> {
    switch (call.method) {
      case 'GET':
      case 'HEAD':
        return this.status(call, name, uuid);
      case 'PATCH':
        return this.patch(call, this.sessionFromState(call, name, uuid));
      case 'PUT':
        return this.complete(call, this.sessionFromState(call, name, uuid));
      case 'DELETE':
        return this.cancel(call, this.sessionFromState(call, name, uuid));
      default:
        return methodNotAllowed(call, ['GET', 'HEAD', 'PATCH', 'PUT', 'DELETE']);
    }
  }

  /** Links the blob of `from` into `name` (201), or says it could not (the caller opens a session). */
  private mount(call: Call, name: string, mount: string, from: string): boolean {
    if (!isValidDigest(mount) || !NAME_PATTERN.test(from)) return false;
    const bytes = this.context.store.blob(from, mount);
    if (bytes === undefined) return false;
    call.req.resume();
    this.context.store.repository(name).blobs.set(mount, bytes);
    this.context.stats.mounts += 1;
    this.blobCreated(call, name, mount);
    return true;
  }

  private async monolithic(call: Call, name: string): Promise<void> {
    const digest = parseDigest(call.query.get('digest'));
    const bytes = await readBody(call.req);
    if (sha256(bytes) !== digest) throw registryError('DIGEST_INVALID', { Digest: digest, Reason: 'content does not match digest' });
    this.context.store.putBlob(name, bytes);
    this.context.stats.uploads += 1;
    this.blobCreated(call, name, digest);
  }

  private status(call: Call, name: string, uuid: string): void {
    const session = this.sessions.get(uuid);
    if (session === undefined || session.name !== name) throw registryError('BLOB_UPLOAD_UNKNOWN', 'blob upload unknown');
    this.sessionHeaders(call, session);
    call.res.writeHead(204).end();
  }

  private async patch(call: Call, session: UploadSession): Promise<void> {
    const contentType = call.req.headers['content-type'];
    if (contentType !== undefined && contentType !== '' && contentType !== 'application/octet-stream')
      throw registryError('UNKNOWN', 'bad Content-Type');
    const contentRange = call.req.headers['content-range'];
    const contentLength = call.req.headers['content-length'];
    if (contentRange !== undefined && contentLength !== undefined) {
      const match = /^(\d+)-(\d+)$/.exec(contentRange);
      if (match === null) throw registryError('UNKNOWN', `invalid content range format, ${contentRange}`);
      const start = Number(match[1]);
      const end = Number(match[2]);
      if (start > end || start !== session.size) throw registryError('RANGE_INVALID');
      if (Number(contentLength) !== end - start + 1) throw registryError('SIZE_INVALID');
    }
    const chunk = await readBody(call.req);
    session.chunks.push(chunk);
    session.size += chunk.length;
    this.sessionHeaders(call, session);
    call.res.writeHead(202).end();
  }

  private async complete(call: Call, session: UploadSession): Promise<void> {
    // A missing or unparsable digest leaves the session open for a retry.
    const raw = call.query.get('digest');
    const digest = parseDigest(raw, 'digest missing');
    const last = await readBody(call.req);
    session.chunks.push(last);
    session.size += last.length;
    this.sessions.delete(session.uuid);
    const bytes = Buffer.concat(session.chunks);
    if (sha256(bytes) !== digest) throw registryError('DIGEST_INVALID', { Digest: digest, Reason: 'content does not match digest' });
    this.context.store.putBlob(session.name, bytes);
    this.context.stats.uploads += 1;
    this.blobCreated(call, session.name, digest);
  }

  private cancel(call: Call, session: UploadSession): void {
    call.req.resume();
    this.sessions.delete(session.uuid);
    call.res.writeHead(204, { 'Docker-Upload-UUID': session.uuid }).end();
  }

  /** blobUploadHandler.ResumeBlobUpload: the `_state` must be ours, for this repository and upload, at the current offset. */
  private sessionFromState(call: Call, name: string, uuid: string): UploadSession {
    const state = this.unpackState(call.query.get('_state') ?? '');
    if (state === undefined) throw registryError('BLOB_UPLOAD_INVALID', 'invalid upload state');
    if (state.Name !== name || state.UUID !== uuid) throw registryError('BLOB_UPLOAD_INVALID', 'upload state does not match the request');
    const session = this.sessions.get(uuid);
    if (session === undefined || session.name !== name) throw registryError('BLOB_UPLOAD_UNKNOWN', 'blob upload unknown');
    if (state.Offset !== session.size) throw registryError('RANGE_INVALID');
    return session;
  }

  /** blobUploadResponse: Location (with a fresh `_state`), Range, Docker-Upload-UUID, Content-Length 0. */
  private sessionHeaders(call: Call, session: UploadSession): void {
    const state = this.packState({ Name: session.name, UUID: session.uuid, Offset: session.size });
    call.res.setHeader(
      'Location',
      locationOf(this.context, `/v2/${session.name}/blobs/uploads/${session.uuid}?_state=${encodeURIComponent(state)}`),
    );
    call.res.setHeader('Range', `0-${Math.max(session.size - 1, 0)}`);
    call.res.setHeader('Docker-Upload-UUID', session.uuid);
    call.res.setHeader('Content-Length', '0');
  }

  /** writeBlobCreatedHeaders: 201, Location of the blob, Docker-Content-Digest. */
  private blobCreated(call: Call, name: string, digest: string): void {
    call.res
      .writeHead(201, {
        Location: locationOf(this.context, `/v2/${name}/blobs/${digest}`),
        'Content-Length': '0',
        'Docker-Content-Digest': digest,
      })
      .end();
  }

  private packState(state: UploadState): string {
    const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  private unpackState(token: string): UploadState | undefined {
    const [payload, signature] = token.split('.');
    if (payload === undefined || signature === undefined) return undefined;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as UploadState;
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url');
  }
}
