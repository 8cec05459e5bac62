/** Pulled blobs kept under `<dir>/sha256/<hex>`, written only after their digest was verified. */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export class BlobStore {
  constructor(private readonly dir: string) {}

  path(digest: string): string {
    const [algorithm, hex] = digest.split(':');
    if (algorithm !== 'sha256' || !/^[a-f0-9]{64}$/.test(hex ?? '')) throw new Error(`unsupported digest ${digest}`);
    return path.join(this.dir, 'sha256', hex!);
  }

  has(digest: string): boolean {
    return existsSync(this.path(digest));
  }

  /** Stores `bytes` as `digest`, refusing them when they hash to something else. */
  put(digest: string, bytes: Buffer): string {
    verifyDigest(digest, bytes);
    const file = this.path(digest);
    mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${randomUUID()}.partial`;
    writeFileSync(temp, bytes);
    renameSync(temp, file);
    return file;
  }
}

export function verifyDigest(digest: string, bytes: Buffer): void {
  const actual = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (actual !== digest) throw new Error(`digest mismatch: expected ${digest}, got ${actual}`);
}
