/**
 * A process that writes to a file state store until it is killed, for the
 * kill -9 durability tests: `node state-writer.js <data dir> <round> [compactAtBytes]`.
 * Prints one JSON line per write *after* the store acknowledged it:
 * `{"put": key, "index": n}`, `{"del": key}`, `{"counter": n}` (it also
 * overwrites `r<round>/churn` without printing, to make the log compact). Every line
 * printed is a promise that the write survives. With round "hold" it only
 * opens the store, prints `{"ready": true}` and waits.
 */
import { writeSync } from 'node:fs';
import { openFileStateStore } from '../../core/infra/state/file-store.js';
import type { StateStore } from '../../core/model/store/types.js';
import { valueFor } from './state-values.js';

const [dataDir, round, compactAt] = process.argv.slice(2);
if (!dataDir || !round) throw new Error('usage: state-writer.js <data dir> <round> [compactAtBytes]');
const store = await openFileStateStore({ dataDir, compactAtBytes: compactAt ? Number(compactAt) : undefined });
// Each line is in the pipe before the next write starts: process.stdout is asynchronous on a POSIX pipe (Node
// queues what a full pipe cannot take, and a kill drops the queue), so a kill could lose the acknowledgement
// of a put while the delete that follows it was already durable. fd 1 is blocking here (the child's end).
const say = (line: object): void => {
  const bytes = Buffer.from(`${JSON.stringify(line)}\n`);
  for (let done = 0; done < bytes.length; ) done += writeSync(1, bytes, done);
};
say({ ready: true });

if (round === 'hold') {
  setInterval(() => {}, 60_000);
} else {
  for (let writer = 0; writer < 6; writer++) void writeForever(store, `r${round}/w${writer}`);
  void countForever(store);
  void churnForever(store, `r${round}/churn`);
}

async function writeForever(target: StateStore, prefix: string): Promise<void> {
  for (let n = 0; ; n++) {
    const key = `${prefix}/${n}`;
    await target.put(key, valueFor(key));
    const stored = await target.get(key);
    say({ put: key, index: stored?.modifyIndex });
    if (n % 4 === 3) {
      const doomed = `${prefix}/${n - 2}`;
      await target.delete(doomed);
      say({ del: doomed });
    }
  }
}

/** Overwrites one key with 32 KiB values: the log grows while the live state does not, so compactions happen. */
async function churnForever(target: StateStore, key: string): Promise<void> {
  for (let n = 0; ; n++) await target.put(key, `${n}|${'c'.repeat(32 * 1024)}`);
}

async function countForever(target: StateStore): Promise<void> {
  for (;;) {
    const seen = await target.get('counter');
    const next = seen === null ? 1 : Number(seen.value.toString()) + 1;
    if (await target.put('counter', String(next), { cas: seen?.modifyIndex ?? 0 })) say({ counter: next });
  }
}
