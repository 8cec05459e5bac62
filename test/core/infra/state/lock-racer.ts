/**
 * A process that takes the state lock with its file reads paused at chosen
 * moments, for the lock race test: `node lock-racer.js <state dir> <sync dir>`.
 * Its first read of the lock waits for `<sync dir>/go1` (so that it acts on
 * what it read after others moved on); its next read waits for `go2`. It
 * announces each pause with a file (`read-1`, `read-2`) and prints the
 * outcome as one JSON line.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const [stateDir, syncDir] = process.argv.slice(2) as [string, string];
const require = createRequire(import.meta.url);
const fsPromises = require('node:fs/promises') as typeof import('node:fs/promises');
const readFile = fsPromises.readFile;
let reads = 0;

async function pause(name: string, until: string): Promise<void> {
  writeFileSync(path.join(syncDir, name), '');
  while (!existsSync(path.join(syncDir, until))) await sleep(5);
}

// The lock module imports readFile from node:fs/promises; this swaps what that import sees.
fsPromises.readFile = (async (...args: Parameters<typeof readFile>) => {
  const file = String(args[0]);
  if (file.startsWith(stateDir) && reads < 2) {
    reads += 1;
    if (reads === 1) {
      const result = await readFile(...args);
      await pause('read-1', 'go1');
      return result;
    }
    await pause('read-2', 'go2');
  }
  return readFile(...args);
}) as typeof readFile;
syncBuiltinESMExports();

const { acquireLock } = await import('../../../../core/infra/state/lock-file.js');
try {
  await acquireLock(stateDir);
  console.log(JSON.stringify({ acquired: true }));
} catch (error) {
  console.log(JSON.stringify({ acquired: false, code: (error as { code?: string }).code }));
}
