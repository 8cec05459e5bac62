/**
 * A client of one container registry's HTTP API (the OCI distribution spec /
 * Docker Registry HTTP API V2): read manifests and blobs of a base image,
 * push blobs (cross-repository mount first, then a monolithic upload) and a
 * manifest. Answers 401 with the challenge the registry sends: a bearer token
 * from its token server (Docker Hub, most hosted registries) or Basic
 * credentials on each request.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';
import { SvcError } from '../../../model/errors.js';
import { temporaryPath } from '../cache-entries.js';
import { parseChallenge, type Challenge } from './auth-challenge.js';
import { registryRefused, registryUnreachable } from './registry-errors.js';

export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

export interface Manifest {
  readonly bytes: Buffer;
  readonly mediaType: string;
  readonly digest: string;
}

interface Call {
  readonly method: 'GET' | 'HEAD' | 'POST' | 'PUT';
  readonly url: string;
  /** The repositories and actions the call needs: `repository:<name>:<actions>`. */
  readonly scopes: readonly string[];
  readonly headers?: Record<string, string>;
  /** Made anew for each attempt: a stream cannot be sent twice. */
  readonly body?: () => Buffer | Readable;
  /** For errors: "the manifest of python:3.11-slim". */
  readonly what: string;
  /** A 404 is an answer (does it exist?), not an error. */
  readonly accept404?: boolean;
  /** Follow redirects (blob downloads: registries send them to their storage). */
  readonly follow?: boolean;
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Readable & { text(): Promise<string>; arrayBuffer(): Promise<ArrayBuffer>; dump(): Promise<void> };
}

/** Hops a blob download may take (registries redirect to their storage). */
const MAX_REDIRECTS = 5;
const TIMEOUT_MS = 300_000;

export class RegistryClient {
  /** Authorization header per scope set, reused until the registry says 401 again. */
  private readonly authorizations = new Map<string, string>();

  /** Normalised as URLs compare it (lowercase host, no default port), so the Authorization header matches. */
  readonly origin: string;

  constructor(
    origin: string,
    /** As in references, for messages: `registry.example.com:5000`. */
    readonly host: string,
    private readonly credentials: RegistryCredentials | null,
  ) {
    this.origin = new URL(origin).origin;
  }

  async getManifest(repository: string, reference: string, accept: string): Promise<Manifest> {
    const what = `the manifest ${repository}:${reference}`;
    const answer = await this.call({
      method: 'GET',
      url: this.url(`/v2/${repository}/manifests/${reference}`),
      scopes: [pull(repository)],
      headers: { accept },
      what,
    });
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    const digest = sha256(bytes);
    const mediaType = (header(answer.headers['content-type']) ?? '').split(';')[0]!.trim() || mediaTypeOf(bytes);
    if (reference.startsWith('sha256:') && digest !== reference) {
      throw new SvcError('image_build_failed', `the registry ${this.host} sent ${what} with the digest ${digest}`, {
        hint: 'The registry or a proxy in between changed the manifest; retry, and check the registry.',
      });
    }
    return { bytes, mediaType, digest };
  }

  async getBlob(repository: string, digest: string): Promise<Buffer> {
    const answer = await this.fetchBlob(repository, digest);
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    if (sha256(bytes) !== digest) throw corrupted(this.host, repository, digest);
    return bytes;
  }

  /** Downloads a blob to `file` (through a temporary name), checking its digest. */
  async downloadBlob(repository: string, digest: string, file: string): Promise<void> {
    const answer = await this.fetchBlob(repository, digest);
    // Named as the sweeper of abandoned builds knows, and per download: two at once never share a file.
    const tmp = temporaryPath(path.dirname(file), `blob-${digest.slice('sha256:'.length, 'sha256:'.length + 16)}`);
    const hash = createHash('sha256');
    answer.body.on('data', (chunk: Buffer) => hash.update(chunk));
    try {
      await pipeline(answer.body, createWriteStream(tmp));
      if (`sha256:${hash.digest('hex')}` !== digest) throw corrupted(this.host, repository, digest);
      await rename(tmp, file);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error instanceof SvcError ? error : registryUnreachable(this.host, `download the blob ${digest}`, error);
    }
  }

  async hasBlob(repository: string, digest: string): Promise<boolean> {
    const answer = await this.call({
      method: 'HEAD',
      url: this.url(`/v2/${repository}/blobs/${digest}`),
      scopes: [push(repository)],
      what: `the blob ${digest} in ${repository}`,
      accept404: true,
    });
    await answer.body.dump();
    // A registry that keeps blobs in object storage may answer with a redirect to it: the blob exists.
    return answer.status === 200 || (answer.status >= 300 && answer.status < 400);
  }

  /** Asks the registry to link a blob `from` another of its repositories into `repository`; false when it could not. */
  async mountBlob(repository: string, digest: string, from: string): Promise<boolean> {
    const query = `?mount=${encodeURIComponent(digest)}&from=${encodeURIComponent(from)}`;
    const answer = await this.call({
      method: 'POST',
      url: this.url(`/v2/${repository}/blobs/uploads/${query}`),
      scopes: [push(repository), pull(from)],
      what: `a mount of ${digest} from ${from} into ${repository}`,
    });
    await answer.body.dump();
    // 201: mounted. 202: the registry opened an upload session instead, which it expires by itself.
    return answer.status === 201;
  }

  /** Uploads a blob from `file`: a session, then one PUT with every byte (the spec's monolithic upload). */
  uploadBlob(repository: string, blob: { digest: string; size: number; file: string }): Promise<void> {
    return this.upload(repository, blob.digest, blob.size, () => createReadStream(blob.file));
  }

  /** Pushes a small blob held in memory (an image config) unless the repository has it; returns its digest. */
  async pushBytes(repository: string, bytes: Buffer): Promise<string> {
    const digest = sha256(bytes);
    if (!(await this.hasBlob(repository, digest))) await this.upload(repository, digest, bytes.length, () => bytes);
    return digest;
  }

  private async upload(repository: string, digest: string, size: number, body: () => Buffer | Readable): Promise<void> {
    const started = await this.call({
      method: 'POST',
      url: this.url(`/v2/${repository}/blobs/uploads/`),
      scopes: [push(repository)],
      what: `an upload to ${repository}`,
    });
    await started.body.dump();
    const done = await this.call({
      method: 'PUT',
      url: this.sessionUrl(repository, started, digest),
      scopes: [push(repository)],
      what: `the blob ${digest} (${size} bytes) for ${repository}`,
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
      body,
    });
    await done.body.dump();
  }

  /** PUTs a manifest under a tag; returns its digest, checked against the registry's. */
  async putManifest(repository: string, tag: string, bytes: Buffer, mediaType: string): Promise<string> {
    const digest = sha256(bytes);
    const answer = await this.call({
      method: 'PUT',
      url: this.url(`/v2/${repository}/manifests/${tag}`),
      scopes: [push(repository)],
      what: `the manifest ${repository}:${tag}`,
      headers: { 'content-type': mediaType, 'content-length': String(bytes.length) },
      body: () => bytes,
    });
    await answer.body.dump();
    const theirs = header(answer.headers['docker-content-digest']);
    if (theirs !== undefined && theirs !== digest) {
      throw new SvcError(
        'image_build_failed',
        `the registry ${this.host} stored the manifest ${repository}:${tag} as ${theirs}, not ${digest}`,
        { hint: 'The registry rewrote the manifest; svc pins images by digest, so it cannot use this registry as it is.' },
      );
    }
    return digest;
  }

  /** The digest a tag names now: a HEAD (which Docker Hub does not count as a pull), a GET if the registry sends no digest. */
  async manifestDigest(repository: string, reference: string, accept: string): Promise<string> {
    const answer = await this.call({
      method: 'HEAD',
      url: this.url(`/v2/${repository}/manifests/${reference}`),
      scopes: [pull(repository)],
      headers: { accept },
      what: `the manifest ${repository}:${reference}`,
      accept404: true,
    });
    await answer.body.dump();
    const digest = header(answer.headers['docker-content-digest']);
    if (answer.status === 200 && digest !== undefined && /^sha256:[0-9a-f]{64}$/.test(digest)) return digest;
    // No digest header, or not found: a GET hashes the manifest, or fails with the registry's own error (a HEAD has no body).
    return (await this.getManifest(repository, reference, accept)).digest;
  }

  /** True when the manifest exists (a HEAD). */
  async hasManifest(repository: string, digest: string, accept: string): Promise<boolean> {
    const answer = await this.call({
      method: 'HEAD',
      url: this.url(`/v2/${repository}/manifests/${digest}`),
      scopes: [pull(repository)],
      headers: { accept },
      what: `the manifest ${repository}@${digest}`,
      accept404: true,
    });
    await answer.body.dump();
    return answer.status === 200;
  }

  private async fetchBlob(repository: string, digest: string): Promise<Answer> {
    return this.call({
      method: 'GET',
      url: this.url(`/v2/${repository}/blobs/${digest}`),
      scopes: [pull(repository)],
      what: `the blob ${digest} of ${repository}`,
      follow: true,
    });
  }

  /** Where an upload session's bytes go: its Location (relative or absolute) with `?digest=`. */
  private sessionUrl(repository: string, started: Answer, digest: string): string {
    const location = header(started.headers.location);
    if (location === undefined) {
      throw new SvcError('image_build_failed', `the registry ${this.host} opened an upload to ${repository} without a Location header`, {
        hint: 'The registry does not follow the distribution spec; check it.',
      });
    }
    // The query is kept byte for byte (it may be signed, `?_state=…`): `digest` is appended, never re-encoded into it.
    const target = new URL(location, this.url(`/v2/${repository}/blobs/uploads/`)).toString();
    return `${target}${target.includes('?') ? '&' : '?'}digest=${encodeURIComponent(digest)}`;
  }

  private url(path: string): string {
    return `${this.origin}${path}`;
  }

  private async call(call: Call): Promise<Answer> {
    const key = call.scopes.join(' ');
    let answer = await this.send(call, this.authorizations.get(key));
    if (answer.status === 401) {
      const challenge = parseChallenge(answer.headers['www-authenticate']);
      await answer.body.dump();
      if (challenge === null) throw registryRefused(this.host, call.what, 401, '');
      const authorization = await this.authorize(challenge, call.scopes);
      this.authorizations.set(key, authorization);
      answer = await this.send(call, authorization);
    }
    if (answer.status < 400 || (answer.status === 404 && call.accept404 === true)) return answer;
    const body = call.method === 'HEAD' ? '' : await answer.body.text().catch(() => '');
    throw registryRefused(this.host, call.what, answer.status, body);
  }

  /** One attempt, following redirects for GETs; the Authorization header stays with the registry's own origin. */
  private async send(call: Call, authorization: string | undefined): Promise<Answer> {
    let url = call.url;
    for (let hop = 0; ; hop++) {
      const sameOrigin = new URL(url).origin === this.origin;
      const headers: Record<string, string> = { ...call.headers };
      if (authorization !== undefined && sameOrigin) headers.authorization = authorization;
      let answer: Answer;
      try {
        answer = (await request(url, {
          method: call.method,
          headers,
          body: call.body?.(),
          headersTimeout: TIMEOUT_MS,
          bodyTimeout: TIMEOUT_MS,
        })) as unknown as Answer;
      } catch (error) {
        throw registryUnreachable(this.host, `${call.method === 'GET' || call.method === 'HEAD' ? 'read' : 'send'} ${call.what}`, error);
      }
      const status = (answer as unknown as { statusCode: number }).statusCode;
      const location = header(answer.headers.location);
      if (call.follow === true && [301, 302, 303, 307, 308].includes(status) && location !== undefined && hop < MAX_REDIRECTS) {
        await answer.body.dump();
        url = new URL(location, url).toString();
        continue;
      }
      return { status, headers: answer.headers, body: answer.body };
    }
  }

  private async authorize(challenge: Challenge, scopes: readonly string[]): Promise<string> {
    const basic =
      this.credentials === null
        ? undefined
        : `Basic ${Buffer.from(`${this.credentials.username}:${this.credentials.password}`).toString('base64')}`;
    if (challenge.scheme === 'basic') {
      if (basic === undefined) throw registryRefused(this.host, 'access without credentials', 401, '');
      return basic;
    }
    const realm = challenge.params.realm;
    if (realm === undefined)
      throw new SvcError('image_build_failed', `the registry ${this.host} asked for a bearer token but named no token server (realm)`);
    const tokenUrl = new URL(realm);
    if (challenge.params.service !== undefined) tokenUrl.searchParams.set('service', challenge.params.service);
    for (const scope of new Set([...scopes, ...(challenge.params.scope ?? '').split(' ').filter(Boolean)]))
      tokenUrl.searchParams.append('scope', scope);
    let answer: Answer;
    try {
      answer = (await request(tokenUrl, {
        method: 'GET',
        headers: basic === undefined ? {} : { authorization: basic },
        headersTimeout: TIMEOUT_MS,
      })) as unknown as Answer;
    } catch (error) {
      throw registryUnreachable(this.host, 'get a token from its token server', error);
    }
    const status = (answer as unknown as { statusCode: number }).statusCode;
    const text = await answer.body.text();
    if (status !== 200) throw registryRefused(this.host, `a token (${tokenUrl.origin}${tokenUrl.pathname})`, status, text);
    let token: unknown;
    try {
      const value = JSON.parse(text) as { token?: unknown; access_token?: unknown };
      token = value.token ?? value.access_token;
    } catch {
      token = undefined;
    }
    if (typeof token !== 'string' || token === '')
      throw new SvcError('image_build_failed', `the token server of ${this.host} answered without a token`);
    return `Bearer ${token}`;
  }
}

export function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function pull(repository: string): string {
  return `repository:${repository}:pull`;
}

function push(repository: string): string {
  return `repository:${repository}:pull,push`;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A manifest served without a Content-Type: its own `mediaType` field says what it is. */
function mediaTypeOf(bytes: Buffer): string {
  try {
    const value = JSON.parse(bytes.toString('utf8')) as { mediaType?: unknown };
    return typeof value.mediaType === 'string' ? value.mediaType : '';
  } catch {
    return '';
  }
}

function corrupted(host: string, repository: string, digest: string): SvcError {
  return new SvcError('image_build_failed', `the registry ${host} sent bytes for ${repository}@${digest} that do not match that digest`, {
    hint: 'The download was cut or changed on the way; retry the deploy.',
  });
}
