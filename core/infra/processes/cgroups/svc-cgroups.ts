/**
 * The cgroups of one local driver: `<svc's own cgroup>/svc/<pid>-<random>/<container>`
 * in each hierarchy, so that every svc process (and every driver in it) has
 * its own folder, and whatever limits svc runs under also bound its
 * containers. Opening it is the test of whether limits can be enforced
 * here: when a folder cannot be made, `enforcement` says why and containers
 * run without limits. Folders of svc processes that died are swept on open.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from '../abandoned.js';
import { ContainerCgroup, distinctFolders, killMembers, removeFolders } from './container-cgroup.js';
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
  // The pid namespace is part of the name: a pid means nothing outside it, and svc processes of
  // other namespaces (containers) may share this folder.
  const namespace = pidNamespace();
  const driverName = `${namespace}-${process.pid}-${randomBytes(4).toString('hex')}`;
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
  void sweepStale(svcDirs, namespace).catch(() => {}); // best effort: a folder it cannot remove waits for the next start
  return {
    enforcement: { enforced: true },
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

/** The inode of this process's pid namespace (`pid:[4026531836]` → `4026531836`); `0` where /proc does not say. */
function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
  } catch {
    return '0';
  }
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
    return uid !== undefined && uid !== 0
      ? `svc runs as uid ${uid}, not root, and may not write ${where}`
      : `svc may not write ${where} (${code})`;
  }
  if (code === 'EROFS') return `the cgroup filesystem of ${where} is mounted read-only`;
  // v1 refuses a child's CFS quota above an ancestor's (v2 caps it quietly).
  if (code === 'EINVAL' && where.endsWith('cpu.cfs_quota_us'))
    return `the kernel refused the cpu quota in ${where}: svc's own cgroup (or one above it) allows less cpu than the workload's cpu; lower cpu or give svc more`;
  // cgroup v2's "no internal processes" rule: a cgroup holding processes cannot hand controllers to children.
  if (code === 'EBUSY')
    return `${where} holds processes (svc's own among them), so cgroup v2 does not let it hand cpu and memory to child cgroups; run svc in a cgroup of its own`;
  return (error as Error).message;
}

/**
 * Removes the folders of svc processes that are gone: their containers
 * normally end with them (their lifelines close), and what is left is killed,
 * so a crashed svc leaves nothing behind once another one starts.
 */
async function sweepStale(svcDirs: CgroupDirs, namespace: string): Promise<void> {
  for (const parent of distinctFolders(svcDirs)) {
    for (const entry of readdirSync(parent, { withFileTypes: true })) {
      // Only folders of svc processes of this pid namespace: elsewhere a live svc's pid may be free here.
      const owner = /^(\d+)-(\d+)-[0-9a-f]+$/.exec(entry.name);
      if (!entry.isDirectory() || owner === null || owner[1] !== namespace || Number(owner[2]) === process.pid || isAlive(Number(owner[2])))
        continue;
      const stale = path.join(parent, entry.name);
      const containers = readdirSync(stale, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => path.join(stale, e.name));
      for (const container of containers) killMembers(container);
      for (let attempt = 1; attempt <= STALE_ATTEMPTS && !removeFolders([...containers, stale]); attempt++) await sleep(STALE_PAUSE_MS);
    }
  }
}
