/**
 * CPU time of a process and its descendants (user + system), read from
 * /proc/<pid>/stat: how a proxy's cost per request is judged. Unlike
 * wall-clock figures, the other tenants of a shared machine barely move it.
 * Linux only; elsewhere every reading is 0 (and the table says "–").
 */
import { readdirSync, readFileSync } from 'node:fs';

/** /proc/<pid>/stat counts in clock ticks: 100 per second on every Linux this runs on (`getconf CLK_TCK`). */
const US_PER_TICK = 1_000_000 / 100;

interface Stat {
  readonly ppid: number;
  readonly cpuUs: number;
}

function stat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: fields are counted after its closing one.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // Fields 4 (ppid), 14 (utime), 15 (stime) of proc(5), here shifted by the two before the name's end.
    return { ppid: Number(fields[1]), cpuUs: (Number(fields[11]) + Number(fields[12])) * US_PER_TICK };
  } catch {
    return null;
  }
}

/** Every live process whose ancestry reaches `root` (root included). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (s) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  }
  const tree: number[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    tree.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/**
 * A probe of the CPU (µs) used so far by the processes it names: the tree
 * of each root pid. The tree is listed once, when the probe is made (the
 * proxies measured fork their workers at start, not per request).
 */
export function treeCpu(roots: readonly number[]): () => number {
  return pidsCpu(roots.flatMap(processTree));
}

/** A probe of the CPU (µs) used so far by exactly these processes. */
export function pidsCpu(pids: readonly number[]): () => number {
  return () => pids.reduce((sum, pid) => sum + (stat(pid)?.cpuUs ?? 0), 0);
}

/** A probe of one process's own CPU (µs), without its children's: svc server's (its gateway's), whose containers are its children. */
export function processCpu(pid: number): () => number {
  return () => stat(pid)?.cpuUs ?? 0;
}

/** This process's own CPU (µs): the gateway's, as the embedded platform runs in the bench's process. */
export function selfCpu(): number {
  const used = process.cpuUsage();
  return used.user + used.system;
}
