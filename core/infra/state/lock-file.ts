/**
 * One svc process per state dir: `<dir>/LOCK` holds the owner's pid, host and
 * process start time. It is created whole (temp file, then link(2), which
 * fails if the lock exists), so nobody reads a half-written lock. A lock whose
 * process is gone (or whose pid now belongs to a younger process) is stale and
 * taken over with a warning. Takeovers take turns through `<dir>/LOCK.takeover`
 * (created exclusively): under it the stale lock is read again and removed only
 * if unchanged, so a takeover never removes, even for a moment, a lock that
 * another process has just taken.
 */
import { readFileSync } from 'node:fs';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SvcError } from '../../model/errors.js';
import { createExclusive } from '../files/create-exclusive.js';

export const LOCK_FILE = 'LOCK';
/** A takeover guard this old was left by a process that died in the middle of a takeover, which takes milliseconds. */
const STALE_GUARD_MS = 10_000;
/** How long to wait before looking again while another process is taking over. */
const GUARD_BUSY_WAIT_MS = 50;

interface Holder {
  readonly pid: number;
  readonly host: string;
  /** Start time of the process in clock ticks since boot (Linux /proc), to detect pid reuse. */
  readonly started: string | null;
}

export interface StateLock {
  readonly file: string;
  /** Removes the lock if it is still ours. */
  release(): Promise<void>;
}

export async function acquireLock(dir: string): Promise<{ lock: StateLock; warnings: string[] }> {
  const file = path.join(dir, LOCK_FILE);
  const ours: Holder = { pid: process.pid, host: os.hostname(), started: processStartTime(process.pid) };
  const content = `${JSON.stringify(ours)}\n`;
  const warnings: string[] = [];
  // A few rounds cover races with a process that takes over or exits while we look.
  for (let round = 0; round < 5; round++) {
    if (await createExclusive(file, content)) return { lock: { file, release: () => releaseIfOurs(file, content) }, warnings };
    const raw = await readOrNull(file);
    if (raw === null) continue;
    const holder = parseHolder(raw);
    if (holder === null) throw locked(file, `${file} exists but does not name an svc process`);
    if (holder.host !== ours.host)
      throw locked(
        file,
        `${file} was written by svc on host ${holder.host} (pid ${holder.pid}); svc cannot tell from here whether it still runs`,
      );
    if (holder.pid === ours.pid && holder.started === ours.started)
      throw locked(file, `this process already has the state store in ${dir} open`);
    if (isAlive(holder)) throw locked(file, `another svc process (pid ${holder.pid}) is using the state store in ${dir}`);
    if (await removeIfUnchanged(file, raw))
      warnings.push(`${file}: took over the lock of svc process ${holder.pid}, which is no longer running`);
  }
  throw locked(file, `could not take ${file}: it keeps changing (several svc processes starting at once?)`);
}

/**
 * Removes a stale lock unless it changed since we read `raw`; true when we removed it.
 * (Renaming it aside to compare it would leave no lock for a moment when a fresh one
 * had replaced it, and a third process could then take a second lock.)
 */
async function removeIfUnchanged(file: string, raw: string): Promise<boolean> {
  const guard = `${file}.takeover`;
  if (!(await takeGuard(guard))) return false;
  try {
    // Under the guard the lock cannot change: no other takeover runs, its dead owner
    // cannot release it, and nobody creates a lock while one exists.
    if ((await readOrNull(file)) !== raw) return false;
    await unlink(file);
    return true;
  } finally {
    await unlink(guard).catch(() => undefined);
  }
}

/** Creates the takeover guard; false (after a short wait) when another process holds it. */
async function takeGuard(guard: string): Promise<boolean> {
  try {
    await (await open(guard, 'wx', 0o600)).close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const info = await stat(guard).catch(() => null);
  if (info !== null && Date.now() - info.mtimeMs > STALE_GUARD_MS) await unlink(guard).catch(() => undefined);
  else await sleep(GUARD_BUSY_WAIT_MS);
  return false;
}

async function releaseIfOurs(file: string, content: string): Promise<void> {
  if ((await readOrNull(file)) === content) await unlink(file).catch(() => undefined);
}

function isAlive(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const stat = procStat(holder.pid);
  if (stat === null) return true;
  // A zombie has exited; a different start time means the pid was reused.
  if (stat.state === 'Z') return false;
  return holder.started === null || holder.started === stat.started;
}

function processStartTime(pid: number): string | null {
  return procStat(pid)?.started ?? null;
}

/** State and start time from /proc/<pid>/stat; null where there is no /proc. */
function procStat(pid: number): { state: string; started: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', started: fields[19] ?? '' };
  } catch {
    return null;
  }
}

function parseHolder(raw: string): Holder | null {
  try {
    const value = JSON.parse(raw) as Partial<Holder>;
    if (!Number.isSafeInteger(value.pid) || typeof value.host !== 'string') return null;
    return { pid: value.pid!, host: value.host, started: typeof value.started === 'string' ? value.started : null };
  } catch {
    return null;
  }
}

async function readOrNull(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function locked(file: string, message: string): SvcError {
  return new SvcError('state_locked', message, {
    hint: `Stop the other svc process, or give this one its own --data-dir. Delete ${file} only if you are sure no svc uses this data dir.`,
    details: { file },
  });
}
