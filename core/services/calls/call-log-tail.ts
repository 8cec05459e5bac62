/**
 * What a call printed, as the executor keeps it: the last lines within `MAX_LOG_BYTES` (the
 * oldest go first, counted in `dropped`), written to the state store every `FLUSH_EVERY_MS`
 * while lines come, and once more when the attempt ends, so that `svc call logs` follows a
 * long call as it runs. Each attempt appends to what the ones before printed.
 */
import type { CallLogLine, CallLogs } from './types.js';

/** The most of a call's lines kept, in UTF-8 bytes of their text (a state store value holds 512 KiB). */
export const MAX_LOG_BYTES = 256 * 1024;
/** A longer line is cut to this many characters, with a mark. */
const MAX_LINE_CHARS = 16 * 1024;
export const FLUSH_EVERY_MS = 2_000;

export class CallLogTail {
  readonly #lines: CallLogLine[];
  #dropped: number;
  #bytes: number;
  #changed = false;
  #timer: NodeJS.Timeout | undefined;
  /** Writes go one after the other: a later copy is never overwritten by an earlier one. */
  #writing: Promise<void> = Promise.resolve();

  /** Starts from what earlier attempts printed; `write` stores a copy (its failures are `report`ed, the call goes on). */
  constructor(
    earlier: CallLogs | null,
    private readonly attempt: number,
    private readonly write: (logs: CallLogs) => Promise<void>,
    private readonly report: (error: unknown) => void,
  ) {
    this.#lines = [...(earlier?.lines ?? [])];
    this.#dropped = earlier?.dropped ?? 0;
    this.#bytes = this.#lines.reduce((sum, line) => sum + Buffer.byteLength(line.line), 0);
  }

  add(stream: CallLogLine['stream'], text: string): void {
    const line =
      text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}… (${text.length - MAX_LINE_CHARS} more characters)` : text;
    this.#lines.push({ attempt: this.attempt, stream, line });
    this.#bytes += Buffer.byteLength(line);
    while (this.#bytes > MAX_LOG_BYTES && this.#lines.length > 1) {
      this.#bytes -= Buffer.byteLength(this.#lines.shift()!.line);
      this.#dropped++;
    }
    this.#changed = true;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, FLUSH_EVERY_MS);
  }

  /** Writes the lines if any came since the last write. */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#changed) return;
    this.#changed = false;
    const logs: CallLogs = { lines: [...this.#lines], dropped: this.#dropped };
    this.#writing = this.#writing.then(() => this.write(logs)).catch(this.report);
    await this.#writing;
  }
}
