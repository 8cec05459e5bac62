import { readdirSync, readFileSync } from 'node:fs';

/**
 * Pids of live processes whose command line contains `marker` (read from
 * /proc, so it needs no ps). Used to prove that no container outlives svc.
 */
export function pidsMatching(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      // The state only of those that match: tests poll this while hundreds of processes run.
      if (!cmdline.includes(marker)) continue;
      // Zombies have exited; their parent just has not reaped them yet.
      if (/\) Z /.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) continue;
      pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** Polls until no process matches, or the timeout passes; returns what is left. */
export async function waitNoneMatching(marker: string, timeoutMs: number): Promise<number[]> {
  return waitUntilNone(() => pidsMatching(marker), timeoutMs);
}

/**
 * The matching processes but the image zygotes this process started: a zygote lives as long as
 * its driver, and a container forked from it shows the zygote's command line too, so they are
 * told apart by parent (a zygote's is this process; a forked container's is its zygote).
 */
export function containerPidsMatching(marker: string): number[] {
  return pidsMatching(marker).filter((pid) => {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return !(cmdline.includes('zygote') && parent === process.pid);
    } catch {
      return false; // it ended while we looked
    }
  });
}

/** Waits until no container process matches (zygotes left aside); returns those left when the time ran out. */
export async function waitNoContainerMatching(marker: string, timeoutMs: number): Promise<number[]> {
  return waitUntilNone(() => containerPidsMatching(marker), timeoutMs);
}

async function waitUntilNone(pids: () => number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = pids();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = pids();
  }
  return left;
}
