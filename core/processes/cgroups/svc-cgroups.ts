/**
 * The cgroups of one local driver: `<svc's own cgroup>/svc/<pid>-<random>/<container>`
 * in each hierarchy, so that every svc process (and every driver in it) has
 * its own folder, and whatever limits svc runs under also bound its
 * containers. Opening it is the test of whether limits can be enforced
 * here: when a folder cannot be made, `enforcement` says why and containers
 * run without limits. Folders of svc processes that died are swept on open.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from '../abandoned.js';
import { ContainerCgroup, distinctFolders, removeFolders } from './container-cgroup.js';
import { detectOwnCgroups, type CgroupLayout } from './detect.js';
import type { CgroupDirs, CgroupLimits, Enforcement } from './types.js';

export interface SvcCgroups {
  readonly enforcement: Enforcement;
  /** Makes a container's cgroup with its limits; undefined when limits are not enforced here. Throws when the folder cannot be made. */
  create(containerId: string, limits: CgroupLimits): ContainerCgroup | undefined;
  /** Removes this driver's folder (its containers' are removed as they end). */
  close(): void;
}

export interface SvcCgroupsOptions {
  /** Only cgroup filesystems mounted at or below this folder are used; null: any (the default). */
  readonly under: string | null;
}

const SVC_FOLDER = 'svc';
const STALE_ATTEMPTS = 50;
const STALE_PAUSE_MS = 100;

export function openSvcCgroups(options: SvcCgroupsOptions): SvcCgroups {
  const detection = detectOwnCgroups(options.under);
  if ('unavailable' in detection) return unenforced(detection.unavailable);
  const { layout } = detection;
  const driverName = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const below = (dirs: CgroupDirs, name: string): CgroupDirs => ({
    cpu: path.join(dirs.cpu, name),
    memory: path.join(dirs.memory, name),
    cpuacct: dirs.cpuacct === null ? null : path.join(dirs.cpuacct, name),
  });
  const svcDirs = below(layout.own, SVC_FOLDER);
  const driverDirs = below(svcDirs, driverName);
  try {
    makeDelegated(layout, [layout.own, svcDirs, driverDirs]);
  } catch (error) {
    return unenforced(cannotMake(error));
  }
  void sweepStale(svcDirs).catch(() => {}); // best effort: a folder it cannot remove waits for the next start
  const how = `cgroup v${layout.files.version}: ${distinctFolders(driverDirs).join(', ')}`;
  return {
    enforcement: { enforced: true, how },
    create(containerId, limits) {
      const dirs = below(driverDirs, containerId);
      try {
        for (const folder of distinctFolders(dirs)) mkdirSync(folder);
        layout.files.limit(dirs, limits);
      } catch (error) {
        removeFolders(distinctFolders(dirs));
        throw new Error(`could not make the cgroup of container ${containerId}: ${cannotMake(error)}`, { cause: error });
      }
      return new ContainerCgroup(layout.files, dirs, limits);
    },
    close() {
      removeFolders(distinctFolders(driverDirs));
    },
  };
}

function unenforced(why: string): SvcCgroups {
  return { enforcement: { enforced: false, why }, create: () => undefined, close: () => {} };
}

/** Makes each level's folders; on v2 each level (svc's own cgroup first) hands cpu and memory down. */
function makeDelegated(layout: CgroupLayout, levels: readonly CgroupDirs[]): void {
  levels.forEach((dirs, index) => {
    const folders = distinctFolders(dirs);
    if (index > 0) for (const folder of folders) mkdirSync(folder, { recursive: true });
    for (const folder of folders) layout.files.delegate(folder);
  });
}

/** Why a cgroup folder could not be made or set up, in words an operator can act on. */
function cannotMake(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const where = (error as NodeJS.ErrnoException).path ?? '';
  const uid = process.getuid?.();
  if (code === 'EACCES' || code === 'EPERM') {
    return uid !== undefined && uid !== 0 ? `svc runs as uid ${uid}, not root, and may not write ${where}` : `svc may not write ${where} (${code})`;
  }
  if (code === 'EROFS') return `the cgroup filesystem of ${where} is mounted read-only`;
  // cgroup v2's "no internal processes" rule: a cgroup holding processes cannot hand controllers to children.
  if (code === 'EBUSY') return `${where} holds processes (svc's own among them), so cgroup v2 does not let it hand cpu and memory to child cgroups; run svc in a cgroup of its own`;
  return (error as Error).message;
}

/**
 * Removes the folders of svc processes that are gone: their containers
 * normally end with them (their lifelines close), and what is left is killed,
 * so a crashed svc leaves nothing behind once another one starts.
 */
async function sweepStale(svcDirs: CgroupDirs): Promise<void> {
  for (const parent of distinctFolders(svcDirs)) {
    for (const entry of readdirSync(parent, { withFileTypes: true })) {
      const pid = /^(\d+)-[0-9a-f]+$/.exec(entry.name)?.[1];
      if (!entry.isDirectory() || pid === undefined || Number(pid) === process.pid || isAlive(Number(pid))) continue;
      const stale = path.join(parent, entry.name);
      const containers = readdirSync(stale, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => path.join(stale, e.name));
      for (const container of containers) killMembers(container);
      for (let attempt = 1; attempt <= STALE_ATTEMPTS && !removeFolders([...containers, stale]); attempt++) await sleep(STALE_PAUSE_MS);
    }
  }
}

function killMembers(folder: string): void {
  let pids: string[];
  try {
    pids = readFileSync(path.join(folder, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
