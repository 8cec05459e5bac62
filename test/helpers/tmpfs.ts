/**
 * A small file system of the test's own (a tmpfs), to fill up or make read-only: mounting needs
 * root, which CI has; elsewhere the suite says why it skips.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Tmpfs {
  readonly dir: string;
  /** Remounts it read-only (what is in it stays). */
  readOnly(): void;
  unmount(): void;
}

/** A tmpfs of `size` (`1m`, `24m`) at a new folder, or null (having said why) when it cannot be mounted. */
export function mountTmpfs(size: string): Tmpfs | null {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    console.log(`      (skipped: mounting a tmpfs needs root: ${(error as Error).message.split('\n')[0]})`);
    return null;
  }
  return {
    dir,
    readOnly: () => execFileSync('mount', ['-o', 'remount,ro', dir], { stdio: 'pipe' }),
    unmount() {
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
