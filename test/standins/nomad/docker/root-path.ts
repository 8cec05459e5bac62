/**
 * Resolves a path inside a root filesystem the way the kernel would after chroot(2): `..` stops at
 * the root, and symlinks (absolute or relative) are followed inside the root. containerd resolves
 * layer entries this way (continuity fs.RootPath), so no entry can reach outside the rootfs.
 */
import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';

const MAX_LINKS = 255;

/** The host path of `inner` under `root`, following symlinks in every component but (unless `followLast`) the last. */
export function resolveInRoot(root: string, inner: string, followLast = false): string {
  const pending = inner.split('/').filter((p) => p && p !== '.');
  const resolved: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '..') {
      resolved.pop();
      continue;
    }
    const candidate = path.join(root, ...resolved, part);
    let target: string | null = null;
    if (pending.length > 0 || followLast) {
      try {
        if (lstatSync(candidate).isSymbolicLink()) target = readlinkSync(candidate);
      } catch {
        // does not exist (yet): nothing to follow
      }
    }
    if (target === null) {
      resolved.push(part);
      continue;
    }
    links += 1;
    if (links > MAX_LINKS) throw new Error(`too many levels of symbolic links in ${inner}`);
    if (target.startsWith('/')) resolved.length = 0;
    pending.unshift(...target.split('/').filter((p) => p && p !== '.'));
  }
  return path.join(root, ...resolved);
}
