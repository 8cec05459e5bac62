import { EXEC_OUTPUT_BYTES, type ExecOutcome } from './types.js';

/** What an exec wrote, each stream kept up to EXEC_OUTPUT_BYTES (the rest cut, and said so), for both schedulers' exec. */
export class ExecOutput {
  readonly #chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  readonly #bytes = { stdout: 0, stderr: 0 };
  #truncated = false;

  add(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    const room = EXEC_OUTPUT_BYTES - this.#bytes[stream];
    if (chunk.length > room) this.#truncated = true;
    if (room <= 0) return;
    this.#chunks[stream].push(chunk.subarray(0, room));
    this.#bytes[stream] += Math.min(chunk.length, room);
  }

  outcome(exitCode: number | null, signal: string | null, timedOut: boolean): ExecOutcome {
    return {
      exitCode,
      signal,
      timedOut,
      truncated: this.#truncated,
      stdout: Buffer.concat(this.#chunks.stdout).toString('utf8'),
      stderr: Buffer.concat(this.#chunks.stderr).toString('utf8'),
    };
  }
}
