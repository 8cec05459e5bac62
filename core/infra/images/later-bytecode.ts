/**
 * An image's bytecode, compiled once the image is in place instead of before: a first
 * `.remote()` or deploy of a new image waits for the install only. (Compiling numpy, pandas,
 * scikit-learn and the rest of a six-package image, 4,221 files, took 13 s of a 22 s build on
 * the 2-core test machine; the install itself took 1.3 s.)
 *
 * A container that starts meanwhile compiles in memory what it imports, as it would with no
 * bytecode at all (svc runs Python with PYTHONDONTWRITEBYTECODE); compileall writes each `.pyc`
 * to a temporary file and renames it, so an import never reads half of one. It runs at a lower
 * CPU priority than the containers. `<image>/.svc-bytecode` says it finished: an image found
 * without it (svc stopped mid-way) is compiled again when next used.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { setPriority } from 'node:os';
import path from 'node:path';
import { spawnGroup, type ProcessGroup } from '../processes/group.js';
import type { BuildLog } from './types.js';

export const BYTECODE_MARKER = '.svc-bytecode';

/** Says that the image at `dir` has all its bytecode. */
export async function markBytecodeComplete(dir: string): Promise<void> {
  await writeFile(path.join(dir, BYTECODE_MARKER), `${new Date().toISOString()}\n`);
}

/** Below the containers (0): the compile takes what they leave. */
const NICENESS = 10;
/** How long a stopped compile gets before SIGKILL: it holds nothing worth waiting for. */
const STOP_GRACE_MS = 2_000;

interface Compiling {
  readonly group: ProcessGroup;
  readonly done: Promise<void>;
}

export class LaterBytecode {
  readonly #compiling = new Map<string, Compiling>();
  #closed = false;

  /** Whether the image at `dir` has all its bytecode. */
  static complete(dir: string): boolean {
    return existsSync(path.join(dir, BYTECODE_MARKER));
  }

  /**
   * Starts compiling `sitePackages` of the image at `dir` with its `python`, unless it has its
   * bytecode or is being compiled; a failure goes to `emit` (it only makes starts slower).
   */
  start(dir: string, python: string, sitePackages: string, emit: BuildLog): void {
    if (this.#closed || this.#compiling.has(dir) || LaterBytecode.complete(dir)) return;
    const env = { ...process.env };
    delete env.PYTHONPYCACHEPREFIX; // the .pyc files go beside their sources, where imports look
    const said: string[] = [];
    // A process group (compileall's -j workers in it), so that close() stops all of them.
    const group = spawnGroup({
      command: python,
      args: ['-m', 'compileall', '-q', '-j', '0', sitePackages],
      cwd: dir,
      env,
      onLine: (_stream, text) => {
        said.push(text);
        if (said.length > 3) said.shift(); // the last lines say why
      },
    });
    if (group.pid !== undefined) {
      try {
        setPriority(group.pid, NICENESS);
      } catch {
        // Not allowed to lower it (an unusual sandbox): it compiles at the containers' priority.
      }
    }
    const done = group.exited
      .then(async ({ code, signal }) => {
        // 1: it went through every file, and some would not compile (a package's Python 2 test
        // data, say): those fail when imported anyway, so the image has all the bytecode it can.
        if (code === 0 || code === 1) await markBytecodeComplete(dir);
        else if (signal === null)
          emit(`compiling the bytecode of ${dir} failed (${code === null ? 'it did not start' : `exit ${code}`}): ${said.join(' ')}`);
      })
      .catch(() => undefined)
      .finally(() => this.#compiling.delete(dir));
    this.#compiling.set(dir, { group, done });
  }

  /** Resolves once every compile started so far has ended. */
  async settled(): Promise<void> {
    while (this.#compiling.size > 0) await Promise.all([...this.#compiling.values()].map((entry) => entry.done));
  }

  /** Stops the compiles in flight (their images are compiled again when next used) and starts no more. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#compiling.values()].map((entry) => entry.group.stop(STOP_GRACE_MS)));
    await this.settled();
  }
}
