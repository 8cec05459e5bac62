import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { artifactSecret, createArtifactUrls, ensureArtifactSecret } from '../../../../core/infra/bundles/artifact-url.js';
import type { SvcError } from '../../../../core/model/errors.js';

const SHA = 'ab'.repeat(32);
const OTHER_SHA = 'cd'.repeat(32);
const SECRET = Buffer.alloc(32, 7);
const T0 = Date.parse('2025-06-01T12:00:00.000Z');
const BASE = 'http://svc.internal:7420';

/** The query of a signed URL. */
function partsOf(url: string): { path: string; expires: string; signature: string } {
  const parsed = new URL(url);
  return { path: parsed.pathname, expires: parsed.searchParams.get('expires')!, signature: parsed.searchParams.get('signature')! };
}

function refusedAs(code: string, reason?: string, message?: RegExp) {
  return (error: SvcError) => {
    assert.equal(error.code, code, error.message);
    if (code === 'artifact_url_invalid') {
      assert.equal(error.status, 403);
      assert.match(
        error.hint!,
        /Nomad fetches this URL when an allocation starts; svc signs a new one on every submit — redeploy or scale again/,
      );
      assert.equal((error.details as { reason: string }).reason, reason);
    }
    if (message) assert.match(error.message, message);
    return true;
  };
}

describe('createArtifactUrls()', () => {
  let clock = T0;
  const urls = createArtifactUrls({ secret: SECRET, now: () => clock });
  beforeEach(() => (clock = T0));

  it('signs a URL of the documented shape that verifies, until the end of the next 30-day window by default', () => {
    const url = urls.url(`${BASE}/`, SHA);
    const { path: urlPath, expires, signature } = partsOf(url);
    assert.ok(url.startsWith(`${BASE}/api/v1/bundles/${SHA}/artifact?expires=`), url);
    assert.equal(urlPath, `/api/v1/bundles/${SHA}/artifact`);
    const window = 30 * 24 * 3600;
    assert.equal(Number(expires), (Math.floor(T0 / 1000 / window) + 2) * window);
    // The signed text is part of the contract (another replica, another language may sign).
    assert.equal(signature, createHmac('sha256', SECRET).update(`svc-artifact-v1\n${SHA}\n${expires}`).digest('hex'));
    urls.verify(SHA, expires, signature);
    clock = Number(expires) * 1000 - 1;
    urls.verify(SHA, expires, signature);
  });

  it('signs the same URL for a bundle throughout one window (a job submitted again stays unchanged), a new one in the next', () => {
    const window = 30 * 24 * 3600 * 1000;
    const start = Math.floor(T0 / window) * window;
    clock = start;
    const first = urls.url(BASE, SHA);
    clock = start + window - 1;
    assert.equal(urls.url(BASE, SHA), first);
    clock = start + window;
    const next = urls.url(BASE, SHA);
    assert.notEqual(next, first);
    assert.equal(Number(partsOf(next).expires) - Number(partsOf(first).expires), window / 1000);
  });

  it('refuses a tampered signature, and one made for another bundle, as not signed by this server', () => {
    const { expires, signature } = partsOf(urls.url(BASE, SHA));
    const flipped = (signature[0] === '0' ? '1' : '0') + signature.slice(1);
    assert.throws(
      () => urls.verify(SHA, expires, flipped),
      refusedAs('artifact_url_invalid', 'signature_mismatch', /not signed by this server/),
    );
    assert.throws(
      () => urls.verify(OTHER_SHA, expires, signature),
      refusedAs('artifact_url_invalid', 'signature_mismatch', /not signed by this server/),
    );
    // A later expiry with the old signature is a forgery, not an extension.
    assert.throws(
      () => urls.verify(SHA, String(Number(expires) + 3600), signature),
      refusedAs('artifact_url_invalid', 'signature_mismatch'),
    );
    // Another key (a replica without the shared secret) is refused the same way.
    const other = createArtifactUrls({ secret: Buffer.alloc(32, 8), now: () => clock });
    assert.throws(() => other.verify(SHA, expires, signature), refusedAs('artifact_url_invalid', 'signature_mismatch'));
  });

  it('refuses an expired URL, saying when it expired', () => {
    const short = createArtifactUrls({ secret: SECRET, ttlSeconds: 60, now: () => clock });
    const { expires, signature } = partsOf(short.url(BASE, SHA));
    // Signed at the start of a minute: valid to the end of the next one.
    assert.equal(Number(expires), T0 / 1000 + 120);
    clock = T0 + 119_999;
    short.verify(SHA, expires, signature);
    clock = T0 + 120_000;
    assert.throws(
      () => short.verify(SHA, expires, signature),
      refusedAs('artifact_url_invalid', 'expired', /expired at 2025-06-01T12:02:00\.000Z/),
    );
  });

  it('refuses missing and malformed expires and signatures', () => {
    const { expires, signature } = partsOf(urls.url(BASE, SHA));
    assert.throws(() => urls.verify(SHA, undefined, undefined), refusedAs('artifact_url_invalid', 'missing', /not signed by this server/));
    assert.throws(() => urls.verify(SHA, expires, undefined), refusedAs('artifact_url_invalid', 'missing'));
    assert.throws(() => urls.verify(SHA, '', signature), refusedAs('artifact_url_invalid', 'missing'));
    for (const bad of ['-1', '1e12', '1.5', ' 1', '0x10', '9'.repeat(13), 'soon']) {
      assert.throws(() => urls.verify(SHA, bad, signature), refusedAs('artifact_url_invalid', 'malformed'), bad);
    }
    for (const bad of [signature.toUpperCase(), signature.slice(2), `${signature}00`, 'zz'.repeat(32)]) {
      assert.throws(() => urls.verify(SHA, expires, bad), refusedAs('artifact_url_invalid', 'malformed'), bad);
    }
  });

  it('refuses what is not a sha256 with bad_request, when signing and verifying', () => {
    const { expires, signature } = partsOf(urls.url(BASE, SHA));
    for (const bad of [SHA.slice(1), `${SHA}0`, SHA.toUpperCase(), `../${SHA.slice(3)}`, '']) {
      assert.throws(() => urls.verify(bad, expires, signature), refusedAs('bad_request'), bad);
      assert.throws(() => urls.url(BASE, bad), refusedAs('bad_request'), bad);
    }
  });

  it('refuses a key shorter than 32 bytes and a lifetime that is not a positive whole number', () => {
    assert.throws(() => createArtifactUrls({ secret: Buffer.alloc(31) }), refusedAs('config_invalid'));
    for (const ttlSeconds of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => createArtifactUrls({ secret: SECRET, ttlSeconds }), refusedAs('config_invalid'), String(ttlSeconds));
    }
  });
});

describe('artifactSecret() and ensureArtifactSecret()', () => {
  let root: string;
  let dataDir: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'svc-artifact-key-'));
    dataDir = path.join(root, 'data');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('creates <data dir>/artifact-signing.key (32 bytes as hex, mode 0600) once and reuses it', async () => {
    const first = await ensureArtifactSecret(dataDir);
    const file = path.join(dataDir, 'artifact-signing.key');
    assert.equal(first.length, 32);
    assert.equal((await readFile(file, 'utf8')).trim(), first.toString('hex'));
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(dataDir), ['artifact-signing.key']); // no temp file left behind
    const again = await artifactSecret({ dataDir, env: {} });
    assert.ok(again.equals(first));
    // So a URL signed before a restart still verifies after it.
    const url = new URL(createArtifactUrls({ secret: first }).url(BASE, SHA));
    createArtifactUrls({ secret: again }).verify(SHA, url.searchParams.get('expires')!, url.searchParams.get('signature')!);
  });

  it('gives every concurrent caller the same key', async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => ensureArtifactSecret(dataDir)));
    for (const key of keys) assert.ok(key.equals(keys[0]!));
  });

  it('tightens a key file open to others and says so; refuses a damaged one', async () => {
    const first = await ensureArtifactSecret(dataDir);
    const file = path.join(dataDir, 'artifact-signing.key');
    await chmod(file, 0o644);
    const warnings: string[] = [];
    assert.ok((await ensureArtifactSecret(dataDir, (warning) => warnings.push(warning))).equals(first));
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /tightened it to 0600/);
    await writeFile(file, 'abcd\n');
    await assert.rejects(
      ensureArtifactSecret(dataDir),
      refusedAs('config_invalid', undefined, /artifact-signing\.key does not hold a key/),
    );
  });

  it('takes SVC_ARTIFACT_SECRET (hex, at least 32 bytes) instead of the file, so replicas share it', async () => {
    const hex = 'a1'.repeat(40);
    const secret = await artifactSecret({ dataDir, env: { SVC_ARTIFACT_SECRET: `${hex.toUpperCase()}\n` } });
    assert.ok(secret.equals(Buffer.from(hex, 'hex')));
    await assert.rejects(stat(dataDir), { code: 'ENOENT' }); // the data dir was not touched
  });

  it('refuses an SVC_ARTIFACT_SECRET that is too short, empty or not hex, naming the variable', async () => {
    for (const value of ['ab'.repeat(31), '', 'g'.repeat(64), `${'abc'.repeat(22)}a`]) {
      await assert.rejects(
        artifactSecret({ dataDir, env: { SVC_ARTIFACT_SECRET: value } }),
        refusedAs('config_invalid', undefined, /^SVC_ARTIFACT_SECRET .*at least 32 bytes/),
        JSON.stringify(value),
      );
    }
    await assert.rejects(artifactSecret({ dataDir, env: { SVC_ARTIFACT_SECRET: 'ab'.repeat(31) } }), /has 31 bytes/);
  });
});
