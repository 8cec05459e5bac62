/**
 * Signed, expiring download URLs for code bundles. On Nomad each task fetches
 * its bundle through an `artifact` block, and Nomad clients hold no svc token:
 * the URL carries its own authorization, an HMAC-SHA256 over the bundle's
 * sha256 and the expiry, keyed with a secret only svc servers know. The key
 * is kept in the data dir (or shared by replicas through SVC_ARTIFACT_SECRET),
 * so URLs in submitted jobs stay valid across restarts.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import { SvcError } from '../../model/errors.js';
import { createExclusive } from '../files/create-exclusive.js';
import { readPrivateFile } from '../files/private-file.js';

/**
 * 30 days. URLs expire at the end of the window after the current one (see `url`), so one is
 * valid for 30 to 60 days: Nomad fetches it whenever it starts an allocation (scale from zero
 * after keep_warm, a reschedule), long after the submit that put it into the job.
 */
export const DEFAULT_ARTIFACT_TTL_SECONDS = 30 * 24 * 3600;
export const ARTIFACT_SECRET_FILE = 'artifact-signing.key';
export const ARTIFACT_SECRET_ENV = 'SVC_ARTIFACT_SECRET';
/** HMAC-SHA256's own block-size advice: a key shorter than the hash weakens it. */
export const MIN_ARTIFACT_SECRET_BYTES = 32;

/** Bumped if the signed text ever changes, so an old signature can never mean something new. */
const SIGNED_PREFIX = 'svc-artifact-v1';
const SHA256 = /^[0-9a-f]{64}$/;
/** What a signed URL's `signature` and `expires` look like (the API route declares its query by them). */
export const SIGNATURE = /^[0-9a-f]{64}$/;
/** Unix seconds, digits only: no sign, no exponent, no fraction (at most year 33658). */
export const EXPIRES = /^[0-9]{1,12}$/;
const HEX = /^(?:[0-9a-f]{2})+$/i;
const RETRY_HINT = 'Nomad fetches this URL when an allocation starts; svc signs a new one on every submit — redeploy or scale again.';

export interface ArtifactUrlOptions {
  readonly secret: Buffer;
  /** How long a URL is valid; DEFAULT_ARTIFACT_TTL_SECONDS when absent. */
  readonly ttlSeconds?: number;
  /** Milliseconds since the epoch; tests move it instead of sleeping. */
  readonly now?: Clock;
}

export interface ArtifactUrls {
  /**
   * `<baseUrl>/api/v1/bundles/<sha256>/artifact?expires=<unix s>&signature=<hex>`. The expiry is
   * the end of the TTL window after the current one (valid for one to two TTLs), so every URL
   * signed for a bundle within one window is the same: submitting a job again (a restart of svc,
   * a redeploy of the same code) leaves it unchanged, and Nomad replaces no allocation for it.
   */
  url(baseUrl: string, sha256: string): string;
  /**
   * Returns when the signature is this server's and has not expired; otherwise throws
   * `artifact_url_invalid` (403), or `bad_request` when `sha256` is not one.
   */
  verify(sha256: string, expires: string | undefined, signature: string | undefined): void;
}

/** What the API route needs. */
export type ArtifactVerifier = Pick<ArtifactUrls, 'verify'>;

export function createArtifactUrls(options: ArtifactUrlOptions): ArtifactUrls {
  const secret = Buffer.from(options.secret); // a copy: a caller reusing its buffer cannot change the key
  if (secret.length < MIN_ARTIFACT_SECRET_BYTES) {
    throw new SvcError(
      'config_invalid',
      `the artifact signing key has ${secret.length} bytes; it needs at least ${MIN_ARTIFACT_SECRET_BYTES}.`,
    );
  }
  const ttlSeconds = options.ttlSeconds ?? DEFAULT_ARTIFACT_TTL_SECONDS;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) {
    throw new SvcError('config_invalid', `the artifact URL lifetime must be a whole number of seconds above 0, not ${ttlSeconds}.`);
  }
  const now = options.now ?? systemClock;
  const sign = (sha256: string, expires: string) => createHmac('sha256', secret).update(`${SIGNED_PREFIX}\n${sha256}\n${expires}`).digest();

  return {
    url(baseUrl, sha256) {
      checkSha256(sha256);
      const expires = String((Math.floor(now() / 1000 / ttlSeconds) + 2) * ttlSeconds);
      const query = new URLSearchParams({ expires, signature: sign(sha256, expires).toString('hex') });
      return `${baseUrl.replace(/\/+$/, '')}/api/v1/bundles/${sha256}/artifact?${query}`;
    },
    verify(sha256, expires, signature) {
      checkSha256(sha256);
      if (expires === undefined || signature === undefined || expires === '' || signature === '') throw unsigned('missing');
      if (!EXPIRES.test(expires) || !SIGNATURE.test(signature)) throw unsigned('malformed');
      // The signature first: only an authentic expiry is worth reporting as such.
      if (!timingSafeEqual(sign(sha256, expires), Buffer.from(signature, 'hex'))) {
        throw refused(
          'signature_mismatch',
          `this artifact URL was not signed by this server for the bundle ${sha256} (changed, made for another bundle, or signed with another key).`,
        );
      }
      const expiresAtMs = Number(expires) * 1000;
      if (now() >= expiresAtMs) {
        throw refused('expired', `this artifact URL expired at ${isoAt(expiresAtMs)}.`, isoAt(expiresAtMs));
      }
    },
  };
}

/**
 * The signing key: SVC_ARTIFACT_SECRET (hex) when set, so that replicas share one;
 * else `<dataDir>/artifact-signing.key`, created on first use.
 */
export async function artifactSecret(options: {
  readonly dataDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Told what an operator should know (a key file that was open to others). */
  readonly warn?: (message: string) => void;
}): Promise<Buffer> {
  const fromEnv = options.env[ARTIFACT_SECRET_ENV];
  if (fromEnv !== undefined) return parseEnvSecret(fromEnv);
  return ensureArtifactSecret(options.dataDir, options.warn);
}

/**
 * Reads `<dataDir>/artifact-signing.key`, or creates it (32 random bytes as hex, mode 0600)
 * the way the owner token is created: atomically, never overwritten, the same key for
 * every process that races to create it.
 */
export async function ensureArtifactSecret(dataDir: string, warn: (message: string) => void = () => {}): Promise<Buffer> {
  const file = path.join(dataDir, ARTIFACT_SECRET_FILE);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Two rounds cover losing the creation race; a third would mean the file vanishes as we read it.
  for (let round = 0; round < 3; round++) {
    const existing = await readSecretFile(file);
    if (existing !== null) {
      for (const warning of existing.warnings) warn(warning);
      return existing.secret;
    }
    const secret = randomBytes(MIN_ARTIFACT_SECRET_BYTES);
    if (await createExclusive(file, `${secret.toString('hex')}\n`)) return secret;
  }
  throw new SvcError('internal', `${file} keeps appearing and disappearing while svc reads it`);
}

async function readSecretFile(file: string): Promise<{ secret: Buffer; warnings: readonly string[] } | null> {
  const read = await readPrivateFile(
    file,
    (problem) => corrupt(file, problem),
    'If others may have read it, delete the file and restart svc: artifact URLs signed with the old key stop working.',
  );
  if (read === null) return null;
  const text = read.text.trim();
  if (!HEX.test(text) || text.length < MIN_ARTIFACT_SECRET_BYTES * 2)
    throw corrupt(file, `does not hold a key of at least ${MIN_ARTIFACT_SECRET_BYTES} bytes as hex`);
  return { secret: Buffer.from(text, 'hex'), warnings: read.warnings };
}

function parseEnvSecret(value: string): Buffer {
  const text = value.trim();
  if (!HEX.test(text) || text.length < MIN_ARTIFACT_SECRET_BYTES * 2) {
    const what = text === '' ? 'is empty' : !HEX.test(text) ? 'is not hex (an even number of 0-9, a-f)' : `has ${text.length / 2} bytes`;
    throw new SvcError(
      'config_invalid',
      `${ARTIFACT_SECRET_ENV} ${what}; it must be a key of at least ${MIN_ARTIFACT_SECRET_BYTES} bytes as hex (${MIN_ARTIFACT_SECRET_BYTES * 2} hex digits).`,
      {
        hint: `Generate one with \`openssl rand -hex ${MIN_ARTIFACT_SECRET_BYTES}\` and give every svc replica the same value; unset it to use <data dir>/${ARTIFACT_SECRET_FILE}.`,
        details: { variable: ARTIFACT_SECRET_ENV },
      },
    );
  }
  return Buffer.from(text, 'hex');
}

function checkSha256(sha256: string): void {
  if (!SHA256.test(sha256)) throw notBundleSha256(sha256);
}

/** The `bad_request` of a path that names no bundle sha256. */
export function notBundleSha256(sha256: string): SvcError {
  return new SvcError('bad_request', `${JSON.stringify(sha256)} is not a bundle sha256 (64 lowercase hex digits).`);
}

/** The `artifact_url_invalid` of a URL whose `expires` and `signature` are missing, or not of their shape. */
export function unsigned(reason: 'missing' | 'malformed'): SvcError {
  return reason === 'missing'
    ? refused('missing', 'this artifact URL carries no expires and signature, so it was not signed by this server.')
    : refused('malformed', "this artifact URL's expires or signature is malformed, so it was not signed by this server.");
}

type Reason = 'missing' | 'malformed' | 'signature_mismatch' | 'expired';

function refused(reason: Reason, message: string, expiresAt?: string): SvcError {
  return new SvcError('artifact_url_invalid', message, {
    hint: RETRY_HINT,
    details: expiresAt === undefined ? { reason } : { reason, expiresAt },
  });
}

function corrupt(file: string, problem: string): SvcError {
  return new SvcError('config_invalid', `${file} ${problem}`, {
    hint: `Delete ${file} and restart svc to create a new key; artifact URLs signed with the old one stop working (redeploy). svc never overwrites it itself.`,
    details: { path: file },
  });
}
