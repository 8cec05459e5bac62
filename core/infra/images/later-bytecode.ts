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
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { setPriority } from 'node:os';
import path from 'node:path';
import type { BuildLog } from './types.js';

export const BYTECODE_MARKER = '.svc-bytecode';
/** Below the containers (0): the compile takes what they leave. */
const NICENESS = 10;

interface Compiling {
  readonly child: ChildProcess;
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
   * bytecode or is being compiled; what it says goes to `emit` (a failure is only slower starts).
   */
  start(dir: string, python: string, sitePackages: string, emit: BuildLog): void {
    if (this.#closed || this.#compiling.has(dir) || LaterBytecode.complete(dir)) return;
    const env = { ...process.env };
    delete env.PYTHONPYCACHEPREFIX; // the .pyc files go beside their sources, where imports look
    // A group of its own (compileall's -j workers in it), so that close() stops all of them.
    const child = spawn(python, ['-m', 'compileall', '-q', '-j', '0', sitePackages], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, NICENESS);
      } catch {
        // Not allowed to lower it (an unusual sandbox): it compiles at the containers' priority.
      }
    }
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    const done = new Promise<void>((resolve) => {
      child.once('error', (error) => {
        emit(`bytecode for ${dir} was not compiled (${error.message}): its containers compile what they import`);
        resolve();
      });
      child.once('close', (code, signal) => {
        if (code === 0) {
          resolve(writeFile(path.join(dir, BYTECODE_MARKER), `${new Date().toISOString()}\n`).catch(() => undefined));
          return;
        }
        if (signal === null)
          emit(`compiling the bytecode of ${dir} failed (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' ')}`);
        resolve();
      });
    }).finally(() => this.#compiling.delete(dir));
    this.#compiling.set(dir, { child, done });
  }

  /** Resolves once every compile started so far has ended. */
  async settled(): Promise<void> {
    while (this.#compiling.size > 0) await Promise.all([...this.#compiling.values()].map((entry) => entry.done));
  }

  /** Stops the compiles in flight (their images are compiled again when next used) and starts no more. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const { child } of this.#compiling.values()) {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Ended meanwhile.
      }
    }
    await this.settled();
  }
}
