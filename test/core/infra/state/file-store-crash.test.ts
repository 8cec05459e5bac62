/**
 * kill -9 durability: a real writer process (test/helpers/state-writer.ts)
 * is SIGKILLed mid-stream, round after round on the same data dir, and every
 * write it printed as acknowledged must be there when the store is reopened.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openFileStateStore } from '../../../../core/infra/state/file-store.js';
import { valueFor } from '../../../helpers/state-values.js';
import { tempDirs } from './temp-dirs.js';

const WRITER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'helpers', 'state-writer.js');
const newDataDir = tempDirs();

interface Acknowledged {
  readonly puts: Map<string, number>;
  readonly deletes: Set<string>;
  counter: number;
  maxIndex: number;
}

/** When to kill the writer: after it printed that many acknowledgements, or as soon as it starts a compaction. */
type KillPoint = number | 'compaction';

/** Runs the writer, SIGKILLs it at `killAt`, and collects every acknowledgement it printed. */
async function runAndKill(dataDir: string, round: number, killAt: KillPoint, into: Acknowledged): Promise<void> {
  // Compaction is weighed at every commit here (it runs whenever the log is twice the live state); the writer churns a key to make it happen.
  const child = spawn(process.execPath, [WRITER, dataDir, String(round), '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const kill = (): void => void child.kill('SIGKILL');
  // The compaction's temp file appearing (inotify, no timing) is the moment to kill.
  const watcher =
    killAt === 'compaction'
      ? watch(path.join(dataDir, 'state'), (_event, name) => {
          if (name === 'state.log.compacting') kill();
        })
      : null;
  const killAfter = killAt === 'compaction' ? 2000 : killAt; // a compaction round that never compacts still ends
  let buffered = '';
  let acks = 0;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      const ack = JSON.parse(line) as { put?: string; index?: number; del?: string; counter?: number; ready?: true };
      if (ack.put !== undefined) {
        into.puts.set(ack.put, ack.index!);
        into.maxIndex = Math.max(into.maxIndex, ack.index!);
      }
      if (ack.del !== undefined) into.deletes.add(ack.del);
      if (ack.counter !== undefined) into.counter = Math.max(into.counter, ack.counter);
      if (ack.ready === undefined) acks += 1;
      if (acks === killAfter || (ack.ready && killAfter === 0)) kill();
    }
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])),
  );
  watcher?.close();
  assert.equal(signal, 'SIGKILL', `the writer was killed, not ended (exit code ${code})`);
}

/** The writer deletes `<prefix>/m` (m % 4 = 1) right after it acknowledged `<prefix>/m+2`. */
function mayBeDeleted(key: string, acknowledged: Acknowledged): boolean {
  const slash = key.lastIndexOf('/');
  const n = Number(key.slice(slash + 1));
  return n % 4 === 1 && acknowledged.puts.has(`${key.slice(0, slash)}/${n + 2}`);
}

describe('FileStateStore under kill -9', () => {
  it('keeps every acknowledged write of a writer killed mid-stream, round after round', async function () {
    this.timeout(60_000);
    const dataDir = newDataDir();
    const acknowledged: Acknowledged = { puts: new Map(), deletes: new Set(), counter: 0, maxIndex: 0 };
    // Varied kill points: on open, mid-stream, and in the middle of a compaction.
    const killPoints: KillPoint[] = [0, 1, 7, 'compaction', 40, 150, 'compaction', 3, 300, 'compaction', 90, 17, 'compaction', 220, 60, 5];
    let tornTails = 0;
    let killedMidCompaction = 0;
    for (const [round, killAfter] of killPoints.entries()) {
      await runAndKill(dataDir, round, killAfter, acknowledged);
      if (existsSync(path.join(dataDir, 'state', 'state.log.compacting'))) killedMidCompaction += 1;

      const store = await openFileStateStore({ dataDir });
      try {
        for (const warning of store.warnings) {
          assert.match(warning, /took over the lock of svc process \d+|dropped an incomplete last record/, warning);
          if (/incomplete/.test(warning)) tornTails += 1;
        }
        assert.ok(
          store.warnings.some((w) => /took over the lock/.test(w)),
          'the killed writer left its lock behind',
        );
        for (const [key, index] of acknowledged.puts) {
          const entry = await store.get(key);
          if (acknowledged.deletes.has(key)) {
            assert.equal(entry, null, `round ${round}: ${key} was deleted (acknowledged)`);
            continue;
          }
          // The writer may have deleted it just before it was killed (durable, but not printed yet).
          if (entry === null && mayBeDeleted(key, acknowledged)) continue;
          assert.ok(entry, `round ${round}: acknowledged ${key} (index ${index}) survives`);
          assert.equal(entry.modifyIndex, index);
          assert.equal(entry.value.toString(), valueFor(key));
        }
        const counter = await store.get('counter');
        assert.ok(Number(counter?.value.toString() ?? 0) >= acknowledged.counter, `counter ≥ ${acknowledged.counter}`);
        assert.ok((await store.index()) >= acknowledged.maxIndex);
      } finally {
        await store.close();
      }
    }
    assert.ok(acknowledged.puts.size > 500, `the writers wrote (${acknowledged.puts.size} puts)`);
    // Informational: a kill rarely cuts a write() short (the kernel copies it whole), and lands in a compaction by chance.
    if (process.env.SVC_TEST_VERBOSE)
      console.log(`      ${acknowledged.puts.size} puts, ${tornTails} torn tails, ${killedMidCompaction} kills mid-compaction`);
  });
});
