import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';

/** True while a process with this pid exists (EPERM: it exists, but is another user's). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temporary folders of svc processes that died half-way (a build,
 * an extraction). `pidOf` reads the owner's pid from an entry name, or null for
 * entries that are not temporary; entries of live processes are left alone.
 */
export async function removeAbandoned(parent: string, pidOf: (entry: string) => number | null): Promise<void> {
  for (const entry of await readdir(parent).catch(() => [] as string[])) {
    const pid = pidOf(entry);
    if (pid && pid !== process.pid && !isAlive(pid)) await rm(path.join(parent, entry), { recursive: true, force: true });
  }
}
