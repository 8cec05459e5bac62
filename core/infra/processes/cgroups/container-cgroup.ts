import { readFileSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CgroupDirs, CgroupFiles, CgroupLimits } from './types.js';

/** How long removal waits for the last processes of a container to leave its cgroup. */
const REMOVE_ATTEMPTS = 50;
const REMOVE_PAUSE_MS = 100;

/**
 * One container's cgroup: a folder per hierarchy with the workload's limits.
 * Processes join it by writing their pid into each of `procsFiles` (the
 * runtime does so itself before it imports user code); their children
 * inherit it.
 */
export class ContainerCgroup {
  readonly dirs: CgroupDirs;
  readonly limits: CgroupLimits;
  readonly #files: CgroupFiles;
  /** The distinct folders (co-mounted v1 controllers and v2 share one). */
  readonly #folders: readonly string[];

  constructor(files: CgroupFiles, dirs: CgroupDirs, limits: CgroupLimits) {
    this.#files = files;
    this.dirs = dirs;
    this.limits = limits;
    this.#folders = distinctFolders(dirs);
  }

  /** The `cgroup.procs` file of each folder: a process is in the container's cgroup once its pid is in all. */
  get procsFiles(): readonly string[] {
    return this.#folders.map((folder) => path.join(folder, 'cgroup.procs'));
  }

  /** How many of its processes the kernel killed for memory so far. */
  memoryKills(): number {
    return this.#files.memoryKills(this.dirs);
  }

  /** CPU time its processes used, in microseconds; null when nothing accounts it. */
  cpuUsageMicros(): number | null {
    return this.#files.cpuUsageMicros(this.dirs);
  }

  /** What it uses now: CPU seconds so far (null when nothing accounts them) and memory held; null once it is gone. */
  usage(): { readonly cpuSeconds: number | null; readonly memoryBytes: number } | null {
    try {
      const micros = this.#files.cpuUsageMicros(this.dirs);
      return { cpuSeconds: micros === null ? null : micros / 1e6, memoryBytes: this.#files.memoryBytesNow(this.dirs) };
    } catch {
      return null; // removed meanwhile: a stopped container uses nothing
    }
  }

  /** SIGKILLs every process in it: what left the container's process group (`start_new_session=True`) survives the group's stop. */
  killMembers(): void {
    for (const folder of this.#folders) killMembers(folder);
  }

  /** Kills what is left in it, then removes its folders once the kernel lets go (EBUSY before). False when some stayed. */
  async remove(): Promise<boolean> {
    this.killMembers();
    for (let attempt = 1; ; attempt++) {
      if (removeFolders(this.#folders)) return true;
      if (attempt === REMOVE_ATTEMPTS) return false;
      await sleep(REMOVE_PAUSE_MS);
    }
  }
}

/** SIGKILLs every process in a cgroup folder (never svc itself, nor a pid from outside its namespace, read as 0). */
export function killMembers(folder: string): void {
  let pids: number[];
  try {
    pids = readFileSync(path.join(folder, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return;
  }
  for (const pid of pids) {
    if (!(pid > 0) || pid === process.pid) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

export function distinctFolders(dirs: CgroupDirs): string[] {
  return [...new Set([dirs.cpu, dirs.memory, ...(dirs.cpuacct === null ? [] : [dirs.cpuacct])])];
}

/** rmdir of each folder that is still there; false while one still holds processes. */
export function removeFolders(folders: readonly string[]): boolean {
  let removed = true;
  for (const folder of folders) {
    try {
      rmdirSync(folder);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') removed = false;
    }
  }
  return removed;
}
