/**
 * The registry stand-in over real HTTP, with real sha256 digests: each
 * behaviour it copies from the OCI distribution spec and distribution's
 * handlers (see test/standins/README.md, "Registry") has a test here.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRegistryStandin, TOKEN_SERVICE, type RegistryStandin, type RegistryStandinOptions } from './registry/index.js';

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
const DOCKER_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
const OCI_LAYER = 'application/vnd.oci.image.layer.v1.tar+gzip';

interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
  text: string;
  json(): unknown;
  code(): string | undefined;
}

const digestOf = (bytes: Buffer | string): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const descriptor = (mediaType: string, bytes: Buffer, extra: Record<string, unknown> = {}) => ({
  mediaType,
  digest: digestOf(bytes),
  size: bytes.length,
  ...extra,
});

function imageManifest(config: Buffer, layers: Buffer[], mediaType = OCI_MANIFEST): Buffer {
  return Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType,
      config: descriptor(OCI_CONFIG, config),
      layers: layers.map((layer) => descriptor(OCI_LAYER, layer)),
    }),
  );
}

describe('Registry stand-in', () => {
  let registry: RegistryStandin;
  const started: RegistryStandin[] = [];

  async function start(options: RegistryStandinOptions = {}): Promise<RegistryStandin> {
    const standin = await startRegistryStandin(options);
    started.push(standin);
    return standin;
  }

  beforeEach(async () => {
    registry = await start();
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((standin) => standin.close()));
  });

  async function call(
    method: string,
    target: string,
    options: { body?: Buffer | string; headers?: Record<string, string>; on?: RegistryStandin } = {},
  ): Promise<Answer> {
    const base = (options.on ?? registry).url;
    const response = await fetch(new URL(target, base), { method, body: options.body, headers: options.headers, redirect: 'manual' });
    const body = Buffer.from(await response.arrayBuffer());
    const text = body.toString('utf8');
    return {
      status: response.status,
      headers: response.headers,
      body,
      text,
      json: () => JSON.parse(text),
      code: () => (JSON.parse(text) as { errors: { code: string }[] }).errors[0]?.code,
    };
  }

  /** The upload Location resolved against the registry, with `digest` added to its own query. */
  function withDigest(location: string, digest: string, on = registry): string {
    const url = new URL(location, on.url);
    url.searchParams.set('digest', digest);
    return url.href;
  }

  async function pushBlob(repo: string, bytes: Buffer, headers: Record<string, string> = {}, on = registry): Promise<string> {
    const started = await call('POST', `/v2/${repo}/blobs/uploads/`, { headers, on });
    assert.equal(started.status, 202, started.text);
    const done = await call('PUT', withDigest(started.headers.get('location')!, digestOf(bytes), on), {
      body: bytes,
      headers: { ...headers, 'Content-Type': 'application/octet-stream' },
      on,
    });
    assert.equal(done.status, 201, done.text);
    return digestOf(bytes);
  }

  async function pushImage(
    repo: string,
    tag: string,
    mediaType = OCI_MANIFEST,
  ): Promise<{ manifest: Buffer; digest: string; config: Buffer; layer: Buffer }> {
    const config = Buffer.from(`{"architecture":"amd64","os":"linux","tag":"${tag}"}`);
    const layer = Buffer.from(`layer of ${repo}:${tag}`);
    await pushBlob(repo, config);
    await pushBlob(repo, layer);
    const manifest = imageManifest(config, [layer], mediaType);
    const put = await call('PUT', `/v2/${repo}/manifests/${tag}`, { body: manifest, headers: { 'Content-Type': mediaType } });
    assert.equal(put.status, 201, put.text);
    return { manifest, digest: digestOf(manifest), config, layer };
  }

  describe('base and routing', () => {
    it('answers GET /v2/ with 200 {} and Docker-Distribution-API-Version', async () => {
      const answer = await call('GET', '/v2/');
      assert.equal(answer.status, 200);
      assert.equal(answer.text, '{}');
      assert.equal(answer.headers.get('docker-distribution-api-version'), 'registry/2.0');
      assert.equal(answer.headers.get('content-type'), 'application/json');
    });

    it('redirects /v2 to /v2/ (gorilla StrictSlash)', async () => {
      const answer = await call('GET', '/v2');
      assert.equal(answer.status, 301);
      assert.equal(answer.headers.get('location'), '/v2/');
    });

    it('accepts multi-segment names and answers names outside the spec regex with the router 404', async () => {
      await pushBlob('svc/img-0123', Buffer.from('x'));
      for (const bad of ['Upper/img', 'svc//img', 'svc/-img', 'a..b']) {
        const answer = await call('GET', `/v2/${bad}/tags/list`);
        assert.equal(answer.status, 404, bad);
        assert.equal(answer.text, '404 page not found\n');
      }
    });

    it('answers a name longer than 255 characters with 400 NAME_INVALID', async () => {
      const answer = await call('GET', `/v2/${'a'.repeat(256)}/tags/list`);
      assert.equal(answer.status, 400);
      assert.equal(answer.code(), 'NAME_INVALID');
      assert.match(answer.headers.get('content-type')!, /^application\/json/);
    });

    it('answers a digest of another algorithm or a malformed sha256 with 400 DIGEST_INVALID', async () => {
      for (const digest of ['md5:d41d8cd98f00b204e9800998ecf8427e', 'sha256:abc', `sha256:${'A'.repeat(64)}`]) {
        const answer = await call('GET', `/v2/repo/blobs/${digest}`);
        assert.equal(answer.status, 400, digest);
        assert.equal(answer.code(), 'DIGEST_INVALID');
      }
    });

    it('answers other methods with 405 UNSUPPORTED and Allow; DELETE is unsupported (deletion off)', async () => {
      const digest = await pushBlob('repo', Buffer.from('b'));
      const put = await call('PUT', `/v2/repo/blobs/${digest}`);
      assert.equal(put.status, 405);
      assert.equal(put.code(), 'UNSUPPORTED');
      assert.equal(put.headers.get('allow'), 'GET, HEAD, DELETE');
      const deleteBlob = await call('DELETE', `/v2/repo/blobs/${digest}`);
      assert.equal(deleteBlob.status, 405);
      assert.equal(deleteBlob.code(), 'UNSUPPORTED');
      await pushImage('repo', 'v1');
      const deleteManifest = await call('DELETE', '/v2/repo/manifests/v1');
      assert.equal(deleteManifest.status, 405);
      assert.equal(deleteManifest.code(), 'UNSUPPORTED');
    });
  });

  describe('blob uploads', () => {
    it('opens a session: 202, relative Location with _state, Range 0-0, Docker-Upload-UUID', async () => {
      const answer = await call('POST', '/v2/svc/img/blobs/uploads/'); // fetch sends Content-Length: 0 itself for a POST without a body
      assert.equal(answer.status, 202);
      const uuid = answer.headers.get('docker-upload-uuid')!;
      assert.match(uuid, /^[0-9a-f-]{36}$/);
      assert.match(answer.headers.get('location')!, new RegExp(`^/v2/svc/img/blobs/uploads/${uuid}\\?_state=`));
      assert.equal(answer.headers.get('range'), '0-0');
      assert.equal(answer.headers.get('content-length'), '0');
    });

    it('completes POST then PUT: 201, Location of the blob, Docker-Content-Digest; the blob is served', async () => {
      const bytes = Buffer.from('hello blob');
      const session = await call('POST', '/v2/repo/blobs/uploads/');
      const done = await call('PUT', withDigest(session.headers.get('location')!, digestOf(bytes)), {
        body: bytes,
        headers: { 'Content-Type': 'application/octet-stream' },
      });
      assert.equal(done.status, 201);
      assert.equal(done.headers.get('location'), `/v2/repo/blobs/${digestOf(bytes)}`);
      assert.equal(done.headers.get('docker-content-digest'), digestOf(bytes));
      assert.equal(registry.stats.uploads, 1);

      const head = await call('HEAD', `/v2/repo/blobs/${digestOf(bytes)}`);
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), String(bytes.length));
      assert.equal(head.headers.get('docker-content-digest'), digestOf(bytes));
      assert.equal(head.headers.get('content-type'), 'application/octet-stream');
      assert.equal(head.body.length, 0);
      const get = await call('GET', `/v2/repo/blobs/${digestOf(bytes)}`);
      assert.deepEqual(get.body, bytes);
      assert.equal(registry.stats.blobGets, 1);
    });

    it('takes a single POST with ?digest= and the bytes: 201', async () => {
      const bytes = Buffer.from('monolithic');
      const answer = await call('POST', `/v2/repo/blobs/uploads/?digest=${digestOf(bytes)}`, {
        body: bytes,
        headers: { 'Content-Type': 'application/octet-stream' },
      });
      assert.equal(answer.status, 201);
      assert.equal(answer.headers.get('docker-content-digest'), digestOf(bytes));
      assert.equal(answer.headers.get('location'), `/v2/repo/blobs/${digestOf(bytes)}`);
      assert.deepEqual((await call('GET', answer.headers.get('location')!)).body, bytes);
      const wrong = await call('POST', `/v2/repo/blobs/uploads/?digest=${digestOf('other')}`, { body: bytes });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.code(), 'DIGEST_INVALID');
    });

    it('appends PATCH chunks in order (Range 0-<last>), reports status with GET 204, and closes with PUT and the last chunk', async () => {
      const parts = [Buffer.from('first-'), Buffer.from('second-'), Buffer.from('third')];
      const whole = Buffer.concat(parts);
      let location = (await call('POST', '/v2/repo/blobs/uploads/')).headers.get('location')!;
      let offset = 0;
      for (const part of parts.slice(0, 2)) {
        const patch = await call('PATCH', location, {
          body: part,
          headers: { 'Content-Type': 'application/octet-stream', 'Content-Range': `${offset}-${offset + part.length - 1}` },
        });
        assert.equal(patch.status, 202, patch.text);
        offset += part.length;
        assert.equal(patch.headers.get('range'), `0-${offset - 1}`);
        location = patch.headers.get('location')!;
      }
      const status = await call('GET', location);
      assert.equal(status.status, 204);
      assert.equal(status.headers.get('range'), `0-${offset - 1}`);
      const done = await call('PUT', withDigest(location, digestOf(whole)), { body: parts[2] });
      assert.equal(done.status, 201, done.text);
      assert.deepEqual((await call('GET', `/v2/repo/blobs/${digestOf(whole)}`)).body, whole);
    });

    it('answers a chunk out of order, or one sent to a stale Location, with 416 RANGE_INVALID', async () => {
      const octets = { 'Content-Type': 'application/octet-stream' };
      const first = (await call('POST', '/v2/repo/blobs/uploads/')).headers.get('location')!;
      const patch = await call('PATCH', first, { body: 'abc', headers: { ...octets, 'Content-Range': '0-2' } });
      assert.equal(patch.status, 202);
      const current = patch.headers.get('location')!;
      const gap = await call('PATCH', current, { body: 'def', headers: { ...octets, 'Content-Range': '5-7' } });
      assert.equal(gap.status, 416);
      assert.equal(gap.code(), 'RANGE_INVALID');
      const stale = await call('PATCH', first, { body: 'def', headers: { ...octets, 'Content-Range': '3-5' } });
      assert.equal(stale.status, 416);
      const wrongLength = await call('PATCH', current, { body: 'de', headers: { ...octets, 'Content-Range': '3-5' } });
      assert.equal(wrongLength.status, 400);
      assert.equal(wrongLength.code(), 'SIZE_INVALID');
    });

    it("refuses a PATCH whose Content-Type is neither empty nor application/octet-stream (distribution's 500 UNKNOWN)", async () => {
      const location = (await call('POST', '/v2/repo/blobs/uploads/')).headers.get('location')!;
      const answer = await call('PATCH', location, { body: 'text', headers: { 'Content-Type': 'text/plain' } });
      assert.equal(answer.status, 500);
      assert.equal(answer.code(), 'UNKNOWN');
    });

    it('drops the upload when the digest does not match the bytes (400 DIGEST_INVALID)', async () => {
      const location = (await call('POST', '/v2/repo/blobs/uploads/')).headers.get('location')!;
      const answer = await call('PUT', withDigest(location, digestOf('something else')), { body: 'actual bytes' });
      assert.equal(answer.status, 400);
      assert.equal(answer.code(), 'DIGEST_INVALID');
      const status = await call('GET', location);
      assert.equal(status.status, 404);
      assert.equal(status.code(), 'BLOB_UPLOAD_UNKNOWN');
      assert.equal(registry.stats.uploads, 0);
    });

    it('keeps the upload when the closing PUT has no digest (400 DIGEST_INVALID, retry possible)', async () => {
      const location = (await call('POST', '/v2/repo/blobs/uploads/')).headers.get('location')!;
      const missing = await call('PUT', location);
      assert.equal(missing.status, 400);
      assert.equal(missing.code(), 'DIGEST_INVALID');
      assert.equal((await call('PUT', withDigest(location, digestOf('retry')), { body: 'retry' })).status, 201);
    });

    it('cancels with DELETE (204) and then answers 404 BLOB_UPLOAD_UNKNOWN', async () => {
      const location = (await call('POST', '/v2/repo/blobs/uploads/')).headers.get('location')!;
      const cancel = await call('DELETE', location);
      assert.equal(cancel.status, 204);
      for (const method of ['GET', 'PATCH', 'PUT']) {
        const answer = await call(method, method === 'PUT' ? withDigest(location, digestOf('')) : location);
        assert.equal(answer.status, 404, method);
        assert.equal(answer.code(), 'BLOB_UPLOAD_UNKNOWN', method);
      }
    });

    it('answers an upload location without its _state with 404 BLOB_UPLOAD_INVALID, and an unknown uuid with BLOB_UPLOAD_UNKNOWN', async () => {
      const location = new URL((await call('POST', '/v2/repo/blobs/uploads/')).headers.get('location')!, registry.url);
      const bare = await call('PATCH', location.pathname, { body: 'x' });
      assert.equal(bare.status, 404);
      assert.equal(bare.code(), 'BLOB_UPLOAD_INVALID');
      const unknown = await call('GET', '/v2/repo/blobs/uploads/00000000-0000-0000-0000-000000000000');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.code(), 'BLOB_UPLOAD_UNKNOWN');
    });

    it('keeps a session to its repository', async () => {
      const location = new URL((await call('POST', '/v2/a/blobs/uploads/')).headers.get('location')!, registry.url);
      const elsewhere = location.href.replace('/v2/a/', '/v2/b/');
      assert.equal((await call('GET', elsewhere)).code(), 'BLOB_UPLOAD_UNKNOWN');
      const put = await call('PUT', withDigest(elsewhere, digestOf('x')), { body: 'x' });
      assert.equal(put.status, 404);
      assert.equal(put.code(), 'BLOB_UPLOAD_INVALID');
    });

    it('gives absolute Locations with absoluteLocations', async () => {
      const absolute = await start({ absoluteLocations: true });
      const answer = await call('POST', '/v2/repo/blobs/uploads/', { on: absolute });
      assert.ok(answer.headers.get('location')!.startsWith(`${absolute.url}/v2/repo/blobs/uploads/`));
    });
  });

  describe('blobs', () => {
    it('keeps blobs per repository: 404 BLOB_UNKNOWN in another one', async () => {
      const digest = await pushBlob('a', Buffer.from('only in a'));
      const answer = await call('GET', `/v2/b/blobs/${digest}`);
      assert.equal(answer.status, 404);
      assert.equal(answer.code(), 'BLOB_UNKNOWN');
      assert.deepEqual((answer.json() as { errors: unknown[] }).errors[0], {
        code: 'BLOB_UNKNOWN',
        message: 'blob unknown to registry',
        detail: digest,
      });
      const head = await call('HEAD', `/v2/b/blobs/${digest}`);
      assert.equal(head.status, 404);
    });

    it('mounts a blob from another repository: 201 when there, else 202 and a fresh session', async () => {
      const digest = await pushBlob('src', Buffer.from('shared layer'));
      const mounted = await call('POST', `/v2/dst/blobs/uploads/?mount=${digest}&from=src`);
      assert.equal(mounted.status, 201);
      assert.equal(mounted.headers.get('location'), `/v2/dst/blobs/${digest}`);
      assert.equal(mounted.headers.get('docker-content-digest'), digest);
      assert.equal(registry.stats.mounts, 1);
      assert.equal((await call('HEAD', `/v2/dst/blobs/${digest}`)).status, 200);

      const missing = await call('POST', `/v2/dst/blobs/uploads/?mount=${digestOf('nowhere')}&from=src`);
      assert.equal(missing.status, 202);
      assert.match(missing.headers.get('location')!, /^\/v2\/dst\/blobs\/uploads\//);
      assert.equal(registry.stats.mounts, 1);
    });

    it('serves one byte range with 206', async () => {
      const digest = await pushBlob('repo', Buffer.from('0123456789'));
      const answer = await call('GET', `/v2/repo/blobs/${digest}`, { headers: { Range: 'bytes=2-5' } });
      assert.equal(answer.status, 206);
      assert.equal(answer.text, '2345');
      assert.equal(answer.headers.get('content-range'), 'bytes 2-5/10');
    });

    it('redirects GET with 307 to a path that serves the bytes without credentials (redirectBlobs)', async () => {
      const cdn = await start({ redirectBlobs: true, auth: { mode: 'basic', users: { u: 'p' } } });
      const basic = { Authorization: `Basic ${Buffer.from('u:p').toString('base64')}` };
      const bytes = Buffer.from('big layer');
      const digest = await pushBlob('repo', bytes, basic, cdn);
      const head = await call('HEAD', `/v2/repo/blobs/${digest}`, { headers: basic, on: cdn });
      assert.equal(head.status, 200);
      const answer = await call('GET', `/v2/repo/blobs/${digest}`, { headers: basic, on: cdn });
      assert.equal(answer.status, 307);
      const location = answer.headers.get('location')!;
      assert.ok(location.startsWith(`${cdn.url}/`) && !location.includes('/v2/'));
      const target = await call('GET', location, { on: cdn });
      assert.equal(target.status, 200);
      assert.deepEqual(target.body, bytes);
      assert.equal(cdn.stats.blobGets, 1);
    });
  });

  describe('manifests', () => {
    it('stores an OCI manifest as sent and serves it with its type, digest and length', async () => {
      const { manifest, digest } = await pushImage('svc/img', 'v1');
      assert.equal(registry.stats.manifestPuts, 1);
      for (const reference of ['v1', digest]) {
        const answer = await call('GET', `/v2/svc/img/manifests/${reference}`, { headers: { Accept: `${OCI_MANIFEST}, ${OCI_INDEX}` } });
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.body, manifest);
        assert.equal(answer.headers.get('content-type'), OCI_MANIFEST);
        assert.equal(answer.headers.get('docker-content-digest'), digest);
        assert.equal(answer.headers.get('content-length'), String(manifest.length));
      }
      const head = await call('HEAD', '/v2/svc/img/manifests/v1', { headers: { Accept: OCI_MANIFEST } });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('docker-content-digest'), digest);
      const cached = await call('GET', '/v2/svc/img/manifests/v1', { headers: { Accept: OCI_MANIFEST, 'If-None-Match': `"${digest}"` } });
      assert.equal(cached.status, 304);
    });

    it('answers 201 with Location and Docker-Content-Digest on PUT', async () => {
      const config = Buffer.from('{}');
      await pushBlob('repo', config);
      const manifest = imageManifest(config, []);
      const answer = await call('PUT', '/v2/repo/manifests/latest', { body: manifest, headers: { 'Content-Type': OCI_MANIFEST } });
      assert.equal(answer.status, 201);
      assert.equal(answer.headers.get('location'), `/v2/repo/manifests/${digestOf(manifest)}`);
      assert.equal(answer.headers.get('docker-content-digest'), digestOf(manifest));
    });

    it('answers an OCI manifest the Accept header does not list with 404 MANIFEST_UNKNOWN (as distribution does)', async () => {
      await pushImage('repo', 'v1');
      const answer = await call('GET', '/v2/repo/manifests/v1', { headers: { Accept: `${DOCKER_MANIFEST}, */*` } });
      assert.equal(answer.status, 404);
      assert.deepEqual((answer.json() as { errors: unknown[] }).errors[0], {
        code: 'MANIFEST_UNKNOWN',
        message: 'OCI manifest found, but accept header does not support OCI manifests',
      });
    });

    it('serves a Docker schema2 manifest whatever the Accept header says', async () => {
      const { manifest } = await pushImage('repo', 'v1', DOCKER_MANIFEST);
      const answer = await call('GET', '/v2/repo/manifests/v1');
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('content-type'), DOCKER_MANIFEST);
      assert.deepEqual(answer.body, manifest);
    });

    it('answers an unknown tag or digest with 404 MANIFEST_UNKNOWN', async () => {
      const tag = await call('GET', '/v2/repo/manifests/nope');
      assert.equal(tag.status, 404);
      assert.equal(tag.code(), 'MANIFEST_UNKNOWN');
      const digest = await call('GET', `/v2/repo/manifests/${digestOf('nope')}`);
      assert.equal(digest.code(), 'MANIFEST_UNKNOWN');
    });

    it('refuses a manifest whose blobs are not in the repository (400 MANIFEST_BLOB_UNKNOWN, one per digest)', async () => {
      const config = Buffer.from('{"c":1}');
      const layer = Buffer.from('layer');
      await pushBlob('other', config);
      await pushBlob('other', layer);
      const answer = await call('PUT', '/v2/repo/manifests/v1', {
        body: imageManifest(config, [layer]),
        headers: { 'Content-Type': OCI_MANIFEST },
      });
      assert.equal(answer.status, 400);
      const errors = (answer.json() as { errors: { code: string; detail: unknown }[] }).errors;
      assert.deepEqual(
        errors.map((error) => [error.code, error.detail]),
        [
          ['MANIFEST_BLOB_UNKNOWN', digestOf(config)],
          ['MANIFEST_BLOB_UNKNOWN', digestOf(layer)],
        ],
      );
      assert.equal(registry.stats.manifestPuts, 0);
    });

    it('refuses a descriptor size that does not match the blob (MANIFEST_INVALID), unless strictDescriptorSizes is off', async () => {
      const config = Buffer.from('{"c":2}');
      const wrongSize = Buffer.from(
        JSON.stringify({ schemaVersion: 2, mediaType: OCI_MANIFEST, config: { ...descriptor(OCI_CONFIG, config), size: 99 }, layers: [] }),
      );
      await pushBlob('repo', config);
      const strict = await call('PUT', '/v2/repo/manifests/v1', { body: wrongSize, headers: { 'Content-Type': OCI_MANIFEST } });
      assert.equal(strict.status, 400);
      assert.equal(strict.code(), 'MANIFEST_INVALID');
      const lenient = await start({ strictDescriptorSizes: false });
      await pushBlob('repo', config, {}, lenient);
      assert.equal(
        (await call('PUT', '/v2/repo/manifests/v1', { body: wrongSize, headers: { 'Content-Type': OCI_MANIFEST }, on: lenient })).status,
        201,
      );
    });

    it('refuses bad manifests with MANIFEST_INVALID: unknown Content-Type, mediaType disagreeing, Docker type without mediaType, not JSON, index fields in a manifest', async () => {
      const config = Buffer.from('{}');
      await pushBlob('repo', config);
      const good = JSON.parse(imageManifest(config, []).toString()) as Record<string, unknown>;
      const cases: [string, string, string][] = [
        ['application/json', JSON.stringify(good), 'unsupported manifest media type and no default available: application/json'],
        [
          OCI_MANIFEST,
          JSON.stringify({ ...good, mediaType: DOCKER_MANIFEST }),
          `if present, mediaType in manifest should be '${OCI_MANIFEST}' not '${DOCKER_MANIFEST}'`,
        ],
        [DOCKER_MANIFEST, JSON.stringify({ ...good, mediaType: undefined }), `mediaType in manifest should be '${DOCKER_MANIFEST}' not ''`],
        [OCI_MANIFEST, '{not json', ''],
        [OCI_MANIFEST, JSON.stringify({ ...good, manifests: [] }), 'ocimanifest: expected manifest but found index'],
        [
          OCI_INDEX,
          JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, config: good.config, manifests: [] }),
          'index: expected index but found manifest',
        ],
      ];
      for (const [contentType, body, detail] of cases) {
        const answer = await call('PUT', '/v2/repo/manifests/v1', { body, headers: { 'Content-Type': contentType } });
        assert.equal(answer.status, 400, body);
        assert.equal(answer.code(), 'MANIFEST_INVALID', body);
        if (detail !== '') assert.equal((answer.json() as { errors: { detail: unknown }[] }).errors[0]?.detail, detail);
      }
    });

    it("answers a schemaVersion other than 2 with distribution's 500 UNKNOWN", async () => {
      const answer = await call('PUT', '/v2/repo/manifests/v1', {
        body: JSON.stringify({ schemaVersion: 1, config: {}, layers: [] }),
        headers: { 'Content-Type': OCI_MANIFEST },
      });
      assert.equal(answer.status, 500);
      assert.equal(answer.code(), 'UNKNOWN');
    });

    it("accepts a PUT by digest only when the digest is the bytes' (else 400 DIGEST_INVALID), and tags nothing", async () => {
      const config = Buffer.from('{}');
      await pushBlob('repo', config);
      const manifest = imageManifest(config, []);
      const wrong = await call('PUT', `/v2/repo/manifests/${digestOf('other')}`, {
        body: manifest,
        headers: { 'Content-Type': OCI_MANIFEST },
      });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.code(), 'DIGEST_INVALID');
      const right = await call('PUT', `/v2/repo/manifests/${digestOf(manifest)}`, {
        body: manifest,
        headers: { 'Content-Type': OCI_MANIFEST },
      });
      assert.equal(right.status, 201);
      assert.equal((await call('GET', '/v2/repo/tags/list')).code(), 'NAME_UNKNOWN');
    });

    it('refuses an index whose manifests are not in the repository, accepts it once they are', async () => {
      const amd = await pushImage('repo', 'amd');
      const arm = imageManifest(Buffer.from('{}'), []);
      const index = Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: OCI_INDEX,
          manifests: [
            descriptor(OCI_MANIFEST, amd.manifest, { platform: { architecture: 'amd64', os: 'linux' } }),
            descriptor(OCI_MANIFEST, arm, { platform: { architecture: 'arm64', os: 'linux' } }),
          ],
        }),
      );
      const refused = await call('PUT', '/v2/repo/manifests/multi', { body: index, headers: { 'Content-Type': OCI_INDEX } });
      assert.equal(refused.status, 400);
      assert.equal(refused.code(), 'MANIFEST_BLOB_UNKNOWN');
      assert.equal((refused.json() as { errors: { detail: unknown }[] }).errors[0]?.detail, digestOf(arm));
      await pushBlob('repo', Buffer.from('{}'));
      assert.equal(
        (await call('PUT', `/v2/repo/manifests/${digestOf(arm)}`, { body: arm, headers: { 'Content-Type': OCI_MANIFEST } })).status,
        201,
      );
      assert.equal((await call('PUT', '/v2/repo/manifests/multi', { body: index, headers: { 'Content-Type': OCI_INDEX } })).status, 201);
      const noAccept = await call('GET', '/v2/repo/manifests/multi', { headers: { Accept: OCI_MANIFEST } });
      assert.equal(noAccept.status, 404);
      assert.equal(
        (noAccept.json() as { errors: { message: string }[] }).errors[0]?.message,
        'OCI index found, but accept header does not support OCI indexes',
      );
      const answer = await call('GET', '/v2/repo/manifests/multi', { headers: { Accept: OCI_INDEX } });
      assert.deepEqual(answer.body, index);
    });

    it('replaces a Docker manifest list fetched by tag without the list type in Accept by its linux/amd64 manifest', async () => {
      const amd = await pushImage('repo', 'amd', DOCKER_MANIFEST);
      const list = Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: DOCKER_LIST,
          manifests: [descriptor(DOCKER_MANIFEST, amd.manifest, { platform: { architecture: 'amd64', os: 'linux' } })],
        }),
      );
      assert.equal((await call('PUT', '/v2/repo/manifests/list', { body: list, headers: { 'Content-Type': DOCKER_LIST } })).status, 201);
      const old = await call('GET', '/v2/repo/manifests/list', { headers: { Accept: DOCKER_MANIFEST } });
      assert.equal(old.headers.get('content-type'), DOCKER_MANIFEST);
      assert.equal(old.headers.get('docker-content-digest'), amd.digest);
      const current = await call('GET', '/v2/repo/manifests/list', { headers: { Accept: `${DOCKER_LIST}, ${DOCKER_MANIFEST}` } });
      assert.deepEqual(current.body, list);
    });
  });

  describe('tags', () => {
    it('lists tags in byte order, pages with n/last and Link, and answers an untagged repository with 404 NAME_UNKNOWN', async () => {
      for (const tag of ['b', 'a', 'B', '1.0']) await pushImage('repo', tag);
      const all = await call('GET', '/v2/repo/tags/list');
      assert.deepEqual(all.json(), { name: 'repo', tags: ['1.0', 'B', 'a', 'b'] });
      const page = await call('GET', '/v2/repo/tags/list?n=2');
      assert.deepEqual(page.json(), { name: 'repo', tags: ['1.0', 'B'] });
      assert.equal(page.headers.get('link'), '</v2/repo/tags/list?last=B&n=2>; rel="next"');
      const rest = await call('GET', '/v2/repo/tags/list?n=2&last=B');
      assert.deepEqual(rest.json(), { name: 'repo', tags: ['a', 'b'] });
      assert.equal(rest.headers.get('link'), null);
      const unknown = await call('GET', '/v2/nothing/tags/list');
      assert.equal(unknown.status, 404);
      assert.deepEqual((unknown.json() as { errors: unknown[] }).errors[0], {
        code: 'NAME_UNKNOWN',
        message: 'repository name not known to registry',
        detail: { name: 'nothing' },
      });
      assert.equal((await call('GET', '/v2/repo/tags/list?n=x')).code(), 'PAGINATION_NUMBER_INVALID');
    });
  });

  describe('token auth', () => {
    const users = { builder: 's3cret' };
    const basic = (user: string, password: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

    function challenge(answer: Answer): Record<string, string> {
      const header = answer.headers.get('www-authenticate')!;
      assert.match(header, /^Bearer /);
      return Object.fromEntries([...header.slice(7).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    }

    async function token(on: RegistryStandin, scopes: string[], headers: Record<string, string> = {}): Promise<string> {
      const query = new URLSearchParams({ service: TOKEN_SERVICE });
      for (const scope of scopes) query.append('scope', scope);
      const answer = await call('GET', `/token?${query}`, { headers, on });
      assert.equal(answer.status, 200, answer.text);
      const body = answer.json() as { token: string; access_token: string; expires_in: number; issued_at: string };
      assert.equal(body.token, body.access_token);
      assert.equal(body.expires_in, 300);
      assert.ok(!Number.isNaN(Date.parse(body.issued_at)));
      return body.token;
    }

    it('challenges /v2/ without a token with realm and service, and accepts any valid token there', async () => {
      const secured = await start({ auth: { mode: 'token', users } });
      const answer = await call('GET', '/v2/', { on: secured });
      assert.equal(answer.status, 401);
      assert.equal(answer.code(), 'UNAUTHORIZED');
      assert.deepEqual(challenge(answer), { realm: `${secured.url}/token`, service: TOKEN_SERVICE });
      const bearer = await token(secured, [], basic('builder', 's3cret'));
      assert.equal((await call('GET', '/v2/', { headers: { Authorization: `Bearer ${bearer}` }, on: secured })).status, 200);
    });

    it('names the scope a request needs: pull for reads, pull,push for writes, and pull on the mount source', async () => {
      const secured = await start({ auth: { mode: 'token', users } });
      const read = await call('GET', '/v2/svc/img/manifests/v1', { on: secured });
      assert.equal(challenge(read).scope, 'repository:svc/img:pull');
      assert.deepEqual((read.json() as { errors: { detail: unknown }[] }).errors[0]?.detail, [
        { Type: 'repository', Class: '', Name: 'svc/img', Action: 'pull' },
      ]);
      const write = await call('POST', '/v2/svc/img/blobs/uploads/', { on: secured });
      assert.equal(challenge(write).scope, 'repository:svc/img:pull,push');
      const mount = await call('POST', `/v2/svc/img/blobs/uploads/?mount=${digestOf('x')}&from=svc/base`, { on: secured });
      assert.equal(challenge(mount).scope, 'repository:svc/img:pull,push repository:svc/base:pull');
    });

    it('lets a known user push and pull with a token for the scopes it asked for', async () => {
      const secured = await start({ auth: { mode: 'token', users } });
      const bearer = await token(secured, ['repository:svc/img:pull,push'], basic('builder', 's3cret'));
      const auth = { Authorization: `Bearer ${bearer}` };
      const digest = await pushBlob('svc/img', Buffer.from('layer'), auth, secured);
      assert.equal((await call('GET', `/v2/svc/img/blobs/${digest}`, { headers: auth, on: secured })).status, 200);
      const other = await call('GET', `/v2/svc/other/blobs/${digest}`, { headers: auth, on: secured });
      assert.equal(other.status, 401);
      assert.equal(challenge(other).error, 'insufficient_scope');
    });

    it('takes several scope parameters in one token request', async () => {
      const secured = await start({ auth: { mode: 'token', users } });
      const digest = digestOf('shared');
      const bearer = await token(secured, ['repository:svc/base:pull,push'], basic('builder', 's3cret'));
      await pushBlob('svc/base', Buffer.from('shared'), { Authorization: `Bearer ${bearer}` }, secured);
      const both = await token(secured, ['repository:svc/img:pull,push', 'repository:svc/base:pull'], basic('builder', 's3cret'));
      const mount = await call('POST', `/v2/svc/img/blobs/uploads/?mount=${digest}&from=svc/base`, {
        headers: { Authorization: `Bearer ${both}` },
        on: secured,
      });
      assert.equal(mount.status, 201);
    });

    it('gives anonymous clients pull only with anonymousPull; a push is then 401 insufficient_scope', async () => {
      const open = await start({ auth: { mode: 'token', users, anonymousPull: true } });
      const pusher = await token(open, ['repository:lib/app:pull,push'], basic('builder', 's3cret'));
      const digest = await pushBlob('lib/app', Buffer.from('public'), { Authorization: `Bearer ${pusher}` }, open);
      const anonymous = await token(open, ['repository:lib/app:pull,push']);
      const auth = { Authorization: `Bearer ${anonymous}` };
      assert.equal((await call('GET', `/v2/lib/app/blobs/${digest}`, { headers: auth, on: open })).status, 200);
      const push = await call('POST', '/v2/lib/app/blobs/uploads/', { headers: auth, on: open });
      assert.equal(push.status, 401);
      assert.deepEqual(challenge(push), {
        realm: `${open.url}/token`,
        service: TOKEN_SERVICE,
        scope: 'repository:lib/app:pull,push',
        error: 'insufficient_scope',
      });

      const closed = await start({ auth: { mode: 'token', users } });
      const nothing = await token(closed, ['repository:lib/app:pull']);
      const pull = await call('GET', '/v2/lib/app/tags/list', { headers: { Authorization: `Bearer ${nothing}` }, on: closed });
      assert.equal(pull.status, 401);
      assert.equal(challenge(pull).error, 'insufficient_scope');
    });

    it('answers wrong credentials at /token with 401, and an unknown or other-service token with invalid_token', async () => {
      const secured = await start({ auth: { mode: 'token', users } });
      const wrong = await call('GET', `/token?service=${TOKEN_SERVICE}&scope=repository:a:pull`, {
        headers: basic('builder', 'nope'),
        on: secured,
      });
      assert.equal(wrong.status, 401);
      const forged = await call('GET', '/v2/a/tags/list', { headers: { Authorization: 'Bearer made-up' }, on: secured });
      assert.equal(challenge(forged).error, 'invalid_token');
      const answer = await call('GET', '/token?service=elsewhere&scope=repository:a:pull', {
        headers: basic('builder', 's3cret'),
        on: secured,
      });
      const foreign = (answer.json() as { token: string }).token;
      assert.equal(
        challenge(await call('GET', '/v2/a/tags/list', { headers: { Authorization: `Bearer ${foreign}` }, on: secured })).error,
        'invalid_token',
      );
    });
  });

  describe('basic auth', () => {
    it('challenges with Basic realm="Registry Realm" and accepts a known user', async () => {
      const secured = await start({ auth: { mode: 'basic', users: { u: 'p' } } });
      const answer = await call('GET', '/v2/', { on: secured });
      assert.equal(answer.status, 401);
      assert.equal(answer.headers.get('www-authenticate'), 'Basic realm="Registry Realm"');
      assert.equal(answer.code(), 'UNAUTHORIZED');
      const wrong = await call('GET', '/v2/', {
        headers: { Authorization: `Basic ${Buffer.from('u:x').toString('base64')}` },
        on: secured,
      });
      assert.equal(wrong.status, 401);
      const right = await call('GET', '/v2/', {
        headers: { Authorization: `Basic ${Buffer.from('u:p').toString('base64')}` },
        on: secured,
      });
      assert.equal(right.status, 200);
    });
  });

  describe('seeding', () => {
    it('putImage stores blobs and a manifest as given and returns the digest', async () => {
      const config = Buffer.from('{"os":"linux"}');
      const manifest = imageManifest(config, []);
      const digest = registry.putImage('seed/img', 'v1', { blobs: [config], manifest, mediaType: OCI_MANIFEST });
      assert.equal(digest, digestOf(manifest));
      const answer = await call('GET', '/v2/seed/img/manifests/v1', { headers: { Accept: OCI_MANIFEST } });
      assert.deepEqual(answer.body, manifest);
      assert.equal((await call('HEAD', `/v2/seed/img/blobs/${digestOf(config)}`)).status, 200);
    });

    it('importLayout copies a two-platform OCI layout: the index, both manifests and every blob', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'oci-layout-'));
      try {
        await mkdir(join(dir, 'blobs', 'sha256'), { recursive: true });
        const write = async (bytes: Buffer): Promise<void> => writeFile(join(dir, 'blobs', 'sha256', digestOf(bytes).slice(7)), bytes);
        const platforms: { architecture: string; manifest: Buffer; blobs: Buffer[] }[] = [];
        for (const architecture of ['amd64', 'arm64']) {
          const config = Buffer.from(JSON.stringify({ architecture, os: 'linux', rootfs: { type: 'layers', diff_ids: [] } }));
          const layer = Buffer.from(`rootfs for ${architecture}`);
          const manifest = imageManifest(config, [layer]);
          for (const bytes of [config, layer, manifest]) await write(bytes);
          platforms.push({ architecture, manifest, blobs: [config, layer] });
        }
        const index = Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: OCI_INDEX,
            manifests: platforms.map((p) =>
              descriptor(OCI_MANIFEST, p.manifest, { platform: { architecture: p.architecture, os: 'linux' } }),
            ),
          }),
        );
        await write(index);
        await writeFile(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
        await writeFile(
          join(dir, 'index.json'),
          JSON.stringify({
            schemaVersion: 2,
            mediaType: OCI_INDEX,
            manifests: [descriptor(OCI_INDEX, index, { annotations: { 'org.opencontainers.image.ref.name': 'v1' } })],
          }),
        );

        await registry.importLayout(dir, 'svc/img-0123', 'v1');
        const top = await call('GET', '/v2/svc/img-0123/manifests/v1', { headers: { Accept: `${OCI_INDEX}, ${OCI_MANIFEST}` } });
        assert.equal(top.status, 200);
        assert.deepEqual(top.body, index);
        assert.equal(top.headers.get('docker-content-digest'), digestOf(index));
        for (const platform of platforms) {
          const child = await call('GET', `/v2/svc/img-0123/manifests/${digestOf(platform.manifest)}`, {
            headers: { Accept: OCI_MANIFEST },
          });
          assert.deepEqual(child.body, platform.manifest);
          for (const blob of platform.blobs) assert.deepEqual((await call('GET', `/v2/svc/img-0123/blobs/${digestOf(blob)}`)).body, blob);
        }
        assert.deepEqual((await call('GET', '/v2/svc/img-0123/tags/list')).json(), { name: 'svc/img-0123', tags: ['v1'] });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
