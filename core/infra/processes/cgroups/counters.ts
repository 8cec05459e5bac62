import { readFileSync } from 'node:fs';

/** The value of `key` in a flat-keyed cgroup file (`oom_kill 2`, `usage_usec 1234`); null when the file has no such line. */
export function readCounter(file: string, key: string): number | null {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [name, value] = line.split(' ');
    if (name === key && value !== undefined) return Number(value);
  }
  return null;
}

/** A cgroup file holding one number (`cpuacct.usage`, `memory.failcnt`). */
export function readNumber(file: string): number {
  return Number(readFileSync(file, 'utf8').trim());
}
