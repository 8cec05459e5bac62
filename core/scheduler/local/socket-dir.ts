import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

/**
 * Unix socket paths are limited to ~107 bytes, so container sockets live in a
 * short private folder under the system temp dir, one per data dir, rather
 * than inside a data dir that may be deeply nested.
 */
export function socketDirFor(dataDir: string): string {
  const suffix = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 10);
  return path.join(os.tmpdir(), `svc-${process.getuid?.() ?? 'u'}-${suffix}`);
}
