/**
 * `PUT|GET|HEAD /v2/<name>/manifests/<tag|digest>` (registry/handlers/
 * manifests.go, registry/storage/{ocimanifest,schema2manifest,manifestlist}
 * handler.go, manifest/{ocischema,schema2,manifestlist}):
 *
 * - PUT: the Content-Type picks the schema (others: 400 MANIFEST_INVALID
 *   "unsupported manifest media type and no default available"); a body
 *   `mediaType` that disagrees → MANIFEST_INVALID (Docker types require it,
 *   OCI types only check it when present); a PUT by digest must match the
 *   bytes (DIGEST_INVALID); `schemaVersion` other than 2 is distribution's
 *   500 UNKNOWN; every config/layer blob (image) or child manifest (index)
 *   must be in the repository (MANIFEST_BLOB_UNKNOWN, one per digest). The
 *   bytes are stored as sent → 201 Location + Docker-Content-Digest.
 * - GET/HEAD: the stored bytes with their type, Docker-Content-Digest,
 *   Content-Length and ETag (If-None-Match → 304). An OCI manifest or index
 *   whose type the Accept header does not list is 404 MANIFEST_UNKNOWN; a
 *   Docker manifest list fetched by tag without the list type in Accept is
 *   replaced by its linux/amd64 manifest (the schema1-era fallback).
 * - DELETE: UNSUPPORTED, deletion being off by default.
 *
 * Stricter than distribution (switch: `strictDescriptorSizes`): a
 * descriptor's `size` must equal the size of what it points to (distribution
 * does not check, and the puller fails later).
 */
import { readBody, BodyTooLarge } from './body.js';
import { locationOf, type Call, type RegistryContext } from './context.js';
import { RegistryError, registryError, type ErrorEntry } from './errors.js';
import { methodNotAllowed } from './methods.js';
import {
  DOCKER_MANIFEST,
  DOCKER_MANIFEST_LIST,
  FOREIGN_LAYER_TYPES,
  INDEX_TYPES,
  OCI_INDEX,
  OCI_MANIFEST,
  parseMediaType,
} from './media-types.js';
import { isDigestShaped, isValidDigest, parseDigest } from './names.js';
import { sha256, type Repository, type StoredManifest } from './store.js';

/** maxManifestBodySize */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

interface Descriptor {
  readonly mediaType?: unknown;
  readonly digest?: unknown;
  readonly size?: unknown;
  readonly urls?: unknown;
  readonly platform?: { readonly architecture?: unknown; readonly os?: unknown };
}

interface ManifestDocument {
  readonly schemaVersion?: unknown;
  readonly mediaType?: unknown;
  readonly config?: Descriptor | null;
  readonly layers?: Descriptor[] | null;
  readonly manifests?: Descriptor[] | null;
}

export class ManifestHandler {
  constructor(private readonly context: RegistryContext) {}

  async handle(call: Call, name: string, reference: string): Promise<void> {
    switch (call.method) {
      case 'GET':
      case 'HEAD':
        return this.get(call, name, reference);
      case 'PUT':
        return this.put(call, name, reference);
      case 'DELETE':
        throw registryError('UNSUPPORTED');
      default:
        return methodNotAllowed(call, ['GET', 'HEAD', 'PUT', 'DELETE']);
    }
  }

  private async put(call: Call, name: string, reference: string): Promise<void> {
    let bytes: Buffer;
    try {
      bytes = await readBody(call.req, MAX_MANIFEST_BYTES);
    } catch (error) {
      throw registryError('MANIFEST_INVALID', error instanceof BodyTooLarge ? error.message : (error as Error).message);
    }
    const mediaType = parseMediaType(call.req.headers['content-type'] ?? '') ?? '';
    const document = unmarshal(mediaType, bytes);
    const digest = sha256(bytes);
    if (isDigestShaped(reference) && parseDigest(reference) !== digest) throw registryError('DIGEST_INVALID');
    if (document.schemaVersion !== 2) {
      const kind = INDEX_TYPES.includes(mediaType) ? 'manifest list schema version' : 'manifest schema version';
      throw registryError(
        'UNKNOWN',
        `unrecognized ${kind} ${String(document.schemaVersion ?? 0)}${INDEX_TYPES.includes(mediaType) ? ', expected 2' : ''}`,
      );
    }
    const repository = this.context.store.repository(name);
    const problems = INDEX_TYPES.includes(mediaType) ? this.verifyIndex(document, repository) : this.verifyImage(document, repository);
    if (problems.length > 0) throw new RegistryError(problems);
    this.context.store.putManifest(name, bytes, mediaType, isDigestShaped(reference) ? undefined : reference);
    this.context.stats.manifestPuts += 1;
    call.res
      .writeHead(201, {
        Location: locationOf(this.context, `/v2/${name}/manifests/${digest}`),
        'Docker-Content-Digest': digest,
        'Content-Length': '0',
      })
      .end();
  }

  /** ocischemaManifestHandler / schema2ManifestHandler verifyManifest. */
  private verifyImage(document: ManifestDocument, repository: Repository): ErrorEntry[] {
    const problems: ErrorEntry[] = [];
    for (const descriptor of [document.config ?? {}, ...(document.layers ?? [])]) {
      if (!isValidDigest(descriptor.digest)) {
        problems.push({ code: 'DIGEST_INVALID' }, { code: 'MANIFEST_BLOB_UNKNOWN', detail: descriptor.digest });
        continue;
      }
      const urls = Array.isArray(descriptor.urls) ? descriptor.urls : [];
      if (typeof descriptor.mediaType === 'string' && FOREIGN_LAYER_TYPES.includes(descriptor.mediaType) && urls.length > 0) continue;
      const isManifestRef = descriptor.mediaType === OCI_MANIFEST || descriptor.mediaType === DOCKER_MANIFEST;
      const blob = repository.blobs.get(descriptor.digest);
      if (blob === undefined || (isManifestRef && !repository.manifests.has(descriptor.digest))) {
        problems.push({ code: 'MANIFEST_BLOB_UNKNOWN', detail: descriptor.digest });
        continue;
      }
      problems.push(...this.sizeProblem(descriptor, blob.length));
    }
    return problems;
  }

  /** manifestListHandler.verifyManifest with `validation.indexes.platforms: all` (the default). */
  private verifyIndex(document: ManifestDocument, repository: Repository): ErrorEntry[] {
    const problems: ErrorEntry[] = [];
    for (const descriptor of document.manifests ?? []) {
      const child = isValidDigest(descriptor.digest) ? repository.manifests.get(descriptor.digest) : undefined;
      if (child === undefined) {
        problems.push({ code: 'MANIFEST_BLOB_UNKNOWN', detail: descriptor.digest });
        continue;
      }
      problems.push(...this.sizeProblem(descriptor, child.bytes.length));
    }
    return problems;
  }

  private sizeProblem(descriptor: Descriptor, actual: number): ErrorEntry[] {
    if (!this.context.strictDescriptorSizes || descriptor.size === actual) return [];
    return [
      {
        code: 'MANIFEST_INVALID',
        detail: `descriptor ${String(descriptor.digest)} has size ${String(descriptor.size)}, the content has ${actual} bytes (stand-in check, strictDescriptorSizes)`,
      },
    ];
  }

  private get(call: Call, name: string, reference: string): void {
    const accepted = acceptedTypes(call.req.headers.accept);
    const repository = this.context.store.find(name);
    let digest: string;
    if (isDigestShaped(reference)) {
      digest = parseDigest(reference);
    } else {
      const tagged = repository?.tags.get(reference);
      if (tagged === undefined) throw registryError('MANIFEST_UNKNOWN', { Tag: reference });
      digest = tagged;
    }
    if (etagMatches(call.req.headers['if-none-match'], digest)) {
      call.res.writeHead(304).end();
      return;
    }
    let manifest = repository?.manifests.get(digest);
    if (manifest === undefined) throw registryError('MANIFEST_UNKNOWN', { Name: name, Revision: digest });
    if (manifest.mediaType === OCI_MANIFEST && !accepted.has(OCI_MANIFEST)) {
      throw registryError('MANIFEST_UNKNOWN', undefined, 'OCI manifest found, but accept header does not support OCI manifests');
    }
    if (manifest.mediaType === OCI_INDEX && !accepted.has(OCI_INDEX)) {
      throw registryError('MANIFEST_UNKNOWN', undefined, 'OCI index found, but accept header does not support OCI indexes');
    }
    if (!isDigestShaped(reference) && manifest.mediaType === DOCKER_MANIFEST_LIST && !accepted.has(DOCKER_MANIFEST_LIST)) {
      [digest, manifest] = defaultPlatformManifest(name, manifest, repository!, accepted);
    }
    call.res.writeHead(200, {
      'Content-Type': manifest.mediaType,
      'Content-Length': manifest.bytes.length,
      'Docker-Content-Digest': digest,
      Etag: `"${digest}"`,
    });
    call.res.end(call.method === 'HEAD' ? undefined : manifest.bytes);
  }
}

/** distribution.UnmarshalManifest and each schema's UnmarshalJSON checks; every failure is MANIFEST_INVALID. */
function unmarshal(mediaType: string, bytes: Buffer): ManifestDocument {
  const known = [OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_MANIFEST_LIST];
  if (!known.includes(mediaType))
    throw registryError('MANIFEST_INVALID', `unsupported manifest media type and no default available: ${mediaType}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw registryError('MANIFEST_INVALID', (error as Error).message);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw registryError('MANIFEST_INVALID', 'json: cannot unmarshal into a manifest: not an object');
  const document = parsed as ManifestDocument;
  const declared = typeof document.mediaType === 'string' ? document.mediaType : '';
  checkShapes(document);
  switch (mediaType) {
    case OCI_MANIFEST:
      if (document.manifests !== undefined && document.manifests !== null)
        throw registryError('MANIFEST_INVALID', 'ocimanifest: expected manifest but found index');
      if (declared !== '' && declared !== OCI_MANIFEST)
        throw registryError('MANIFEST_INVALID', `if present, mediaType in manifest should be '${OCI_MANIFEST}' not '${declared}'`);
      break;
    case OCI_INDEX:
      if ((document.config !== undefined && document.config !== null) || (document.layers !== undefined && document.layers !== null)) {
        throw registryError('MANIFEST_INVALID', 'index: expected index but found manifest');
      }
      if (declared !== '' && declared !== OCI_INDEX)
        throw registryError('MANIFEST_INVALID', `if present, mediaType in image index should be '${OCI_INDEX}' not '${declared}'`);
      break;
    case DOCKER_MANIFEST:
      if (declared !== DOCKER_MANIFEST)
        throw registryError('MANIFEST_INVALID', `mediaType in manifest should be '${DOCKER_MANIFEST}' not '${declared}'`);
      break;
    case DOCKER_MANIFEST_LIST:
      if (declared !== DOCKER_MANIFEST_LIST)
        throw registryError('MANIFEST_INVALID', `mediaType in manifest list should be '${DOCKER_MANIFEST_LIST}' not '${declared}'`);
      break;
  }
  return document;
}

/** What Go's json.Unmarshal into the manifest structs would refuse: fields of the wrong JSON type. */
function checkShapes(document: ManifestDocument): void {
  const isObject = (value: unknown): boolean => value !== null && typeof value === 'object' && !Array.isArray(value);
  const wrong = (field: string): never => {
    throw registryError('MANIFEST_INVALID', `json: cannot unmarshal ${field} of the wrong type`);
  };
  if (document.schemaVersion !== undefined && typeof document.schemaVersion !== 'number') wrong('schemaVersion');
  if (document.mediaType !== undefined && typeof document.mediaType !== 'string') wrong('mediaType');
  if (document.config !== undefined && document.config !== null && !isObject(document.config)) wrong('config');
  for (const field of ['layers', 'manifests'] as const) {
    const list = document[field];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list) || !list.every(isObject)) wrong(field);
  }
}

/** The media types an Accept header lists, parsed like GetManifest does (no q-values, no wildcards). */
function acceptedTypes(header: string | undefined): Set<string> {
  const types = new Set<string>();
  for (const part of (header ?? '').split(',')) {
    const type = parseMediaType(part);
    if (type !== undefined) types.add(type);
  }
  return types;
}

function etagMatches(header: string | undefined, digest: string): boolean {
  if (header === undefined) return false;
  return header
    .split(',')
    .map((value) => value.trim())
    .some((value) => value === digest || value === `"${digest}"`);
}

/** The linux/amd64 manifest of a Docker manifest list, for a client that does not accept lists. */
function defaultPlatformManifest(
  name: string,
  list: StoredManifest,
  repository: Repository,
  accepted: Set<string>,
): [string, StoredManifest] {
  const document = JSON.parse(list.bytes.toString('utf8')) as ManifestDocument;
  const entry = (document.manifests ?? []).find(
    (descriptor) => descriptor.platform?.architecture === 'amd64' && descriptor.platform.os === 'linux',
  );
  if (entry === undefined || typeof entry.digest !== 'string') throw registryError('MANIFEST_UNKNOWN');
  const manifest = repository.manifests.get(entry.digest);
  if (manifest === undefined) throw registryError('MANIFEST_UNKNOWN', { Name: name, Revision: entry.digest });
  if (manifest.mediaType === DOCKER_MANIFEST && !accepted.has(DOCKER_MANIFEST))
    throw registryError('MANIFEST_INVALID', undefined, 'Schema 2 manifest not supported by client');
  return [entry.digest, manifest];
}
