/**
 * Bundles kept by content: `<dataDir>/bundles/<sha256>.tar.gz`. A bundle is
 * written to a temporary file in the same folder while its sha256 is
 * computed, checked against the sha256 it claims, and only then renamed into
 * place, so a stored file is always complete and always matches its name.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LRUCache } from 'lru-cache';
import { SvcError } from '../../model/errors.js';
import { asDiskFull } from '../files/disk-full.js';

const SHA256 = /^[0-9a-f]{64}$/;
/**
 * How long a bundle seen on disk is taken as still there without another stat: a warm
 * `.spawn()` names the same bundle every few milliseconds, and each stat is a trip through
 * Node's thread pool. svc never removes a bundle; one an operator removes reads as gone again
 * at most this long after.
 */
const SEEN_FOR_MS = 1000;

export interface StoredBundle {
  readonly sha256: string;
  readonly path: string;
  readonly size: number;
  /** True when the store held this bundle already. */
  readonly existed: boolean;
}

export class BundleStore {
  /** The folder holding the bundles. */
  readonly dir: string;
  readonly #seen: LRUCache<string, true>;

  /** `seenForMs`: how long a bundle found on disk is trusted to be there without a stat (tests shorten it). */
  constructor(dir: string, options: { seenForMs?: number } = {}) {
    this.dir = path.resolve(dir);
    this.#seen = new LRUCache({ max: 1024, ttl: options.seenForMs ?? SEEN_FOR_MS });
  }

  /** The store of a data dir: `<dataDir>/bundles`. */
  static inDataDir(dataDir: string): BundleStore {
    return new BundleStore(path.join(dataDir, 'bundles'));
  }

  /** Where the bundle with this sha256 lives (whether or not it is stored). */
  pathOf(sha256: string): string {
    assertSha256(sha256);
    return path.join(this.dir, `${sha256}.tar.gz`);
  }

  /** True when the bundle is stored: a stat, or one that found it less than `seenForMs` ago. */
  async has(sha256: string): Promise<boolean> {
    const file = this.pathOf(sha256);
    if (this.#seen.has(sha256)) return true;
    if (!(await isFile(file))) return false;
    this.#seen.set(sha256, true);
    return true;
  }

  /** Stores a copy of `file`; `bundle_invalid` when `expectedSha256` is given and differs. */
  async put(file: string, expectedSha256?: string): Promise<StoredBundle> {
    // Opened first: a file that is not there is this promise's failure, never an 'error' event
    // emitted before putStream() listens (which crashed the process as an uncaught exception).
    const handle = await open(file, 'r');
    return this.putStream(handle.createReadStream(), expectedSha256);
  }

  /** Stores what `source` yields; `bundle_invalid` when `expectedSha256` is given and differs. */
  async putStream(source: Readable, expectedSha256?: string): Promise<StoredBundle> {
    if (expectedSha256 !== undefined) assertSha256(expectedSha256);
    await mkdir(this.dir, { recursive: true });
    const tmp = path.join(this.dir, `.incoming-${process.pid}-${randomBytes(6).toString('hex')}`);
    const hash = createHash('sha256');
    let size = 0;
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    try {
      await pipeline(source, hashing, createWriteStream(tmp, { flags: 'wx', mode: 0o644 }));
      const sha256 = hash.digest('hex');
      if (expectedSha256 !== undefined && sha256 !== expectedSha256) {
        throw new SvcError(
          'bundle_invalid',
          `the bundle's sha256 is ${sha256}, not ${expectedSha256} as announced: it was changed or cut short on its way`,
          {
            hint: 'Bundle the project again and resend it.',
            details: { entry: null, rule: 'sha256_mismatch', expected: expectedSha256, actual: sha256 },
          },
        );
      }
      const destination = this.pathOf(sha256);
      // Asked of the disk, not of what was seen: a file removed meanwhile is written again.
      const existed = await isFile(destination);
      if (existed) await rm(tmp, { force: true });
      else await rename(tmp, destination);
      return { sha256, path: destination, size, existed };
    } catch (error) {
      await rm(tmp, { force: true });
      throw await asDiskFull(error, tmp);
    }
  }

  /** `bundle_invalid` unless the stored file still hashes to its name. */
  async verify(sha256: string): Promise<void> {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(this.pathOf(sha256))) hash.update(chunk as Buffer);
    const actual = hash.digest('hex');
    if (actual !== sha256) {
      throw new SvcError(
        'bundle_invalid',
        `the stored bundle ${sha256} no longer matches its sha256 (it is ${actual}): the file was changed on disk`,
        {
          hint: `Remove ${this.pathOf(sha256)} and deploy again.`,
          details: { entry: null, rule: 'sha256_mismatch', expected: sha256, actual },
        },
      );
    }
  }
}

async function isFile(file: string): Promise<boolean> {
  const found = await stat(file).catch(() => null);
  return found !== null && found.isFile();
}

function assertSha256(value: string): void {
  if (!SHA256.test(value)) {
    throw new SvcError('bad_request', `${JSON.stringify(value)} is not a sha256 (64 lowercase hex digits)`);
  }
}
