/** Fresh data dirs under the OS temp dir, removed after the suite. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function tempDirs(): () => string {
  const made: string[] = [];
  after(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-state-test-'));
    made.push(dir);
    return dir;
  };
}
