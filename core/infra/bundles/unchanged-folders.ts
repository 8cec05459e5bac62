/**
 * The bundles this process made of project folders, by what the folder
 * looked like then: every entry's path, mode, size, inode, modification and
 * change times (and a link's target). A folder deployed again with all of
 * these the same has not been written since (git's index judges a file so;
 * the change time moves even when a tool sets the modification time back), so its
 * bundle is the one made last time, and `python -m svc.bundle` (a fifth of a
 * second of a core, before it reads a file) need not run again. A folder
 * with an entry modified in the last two seconds is not remembered: a write
 * within the file system's clock tick could leave its time as it was (git's
 * "racily clean" entries). A folder of more than MAX_ENTRIES entries (a
 * virtual environment left inside it) is not fingerprinted either.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';

export interface RememberedBundle {
  readonly sha256: string;
  /** A stored copy, which a store of another data dir copies from when it lacks it. */
  readonly path: string;
  readonly size: number;
  readonly files: number | null;
  readonly warnings: readonly string[];
}

const MAX_ENTRIES = 2_000;
/** Entries modified this recently make a fingerprint unsafe to remember (nanoseconds). */
const RACY_NS = 2_000_000_000n;

const remembered = new LRUCache<string, RememberedBundle>({ max: 256 });

/** The key of a folder as it is now, bundled with these settings; null when it cannot be remembered. */
export async function folderKey(root: string, settings: readonly unknown[]): Promise<string | null> {
  const entries: string[] = [];
  const now = BigInt(Date.now()) * 1_000_000n;
  const walk = async (dir: string): Promise<boolean> => {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      const file = path.join(dir, name);
      const found = await lstat(file, { bigint: true });
      if (entries.length >= MAX_ENTRIES || now - found.mtimeNs < RACY_NS || now - found.ctimeNs < RACY_NS) return false;
      const link = found.isSymbolicLink() ? await readlink(file) : '';
      entries.push(`${path.relative(root, file)}\0${found.mode}\0${found.size}\0${found.mtimeNs}\0${found.ctimeNs}\0${found.ino}\0${link}`);
      if (found.isDirectory() && !(await walk(file))) return false;
    }
    return true;
  };
  try {
    if (!(await walk(root))) return null;
    return createHash('sha256')
      .update(JSON.stringify([root, ...settings, entries]))
      .digest('hex');
  } catch {
    return null;
  }
}

export function rememberedBundle(key: string): RememberedBundle | undefined {
  return remembered.get(key);
}

export function rememberBundle(key: string, bundle: RememberedBundle): void {
  remembered.set(key, bundle);
}
