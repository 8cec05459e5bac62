/**
 * The bytes `start` to `end` (inclusive) of an open file, as a stream that owns the file handle (closed
 * at the end, or when destroyed). Read as any stream, each piece is a new 1 MiB buffer. `writeTo` sends
 * it to a writable (an HTTP answer) through a few buffers it reuses instead, each read into again once
 * the writable has taken the last write of it: a multi-GiB download then allocates 4 MiB, not a new
 * buffer per MiB, whose external memory made V8 collect garbage over the whole server heap every few
 * dozen MiB (half a second of CPU per GiB served, measured). The buffers a send ends with, those the
 * writable is done with, serve the next sends.
 */
import type { FileHandle } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';

/** How much one read takes. */
const PIECE_BYTES = 1024 * 1024;
/** Buffers in rotation for `writeTo`: reads go on while the socket sends the earlier ones. */
const ROTATION = 4;
/**
 * Whole pieces' buffers that sends ended with, kept for the next (at most SPARE_BUFFERS): a file
 * fetched in parts of 64 MiB is 32 requests a GiB, and a new set of buffers for each kept V8 marking the
 * whole heap several times a second (13 full collections for a get of 2 GiB, 2 to 4 with them; the
 * server's CPU for it 0.9 s → 0.65 s here).
 */
const spare: Buffer[] = [];
const SPARE_BUFFERS = 8;

export class FileRangeStream extends Readable {
  readonly #handle: FileHandle;
  #at: number;
  readonly #end: number;
  #taken = false;

  constructor(handle: FileHandle, start: number, end: number) {
    super({ highWaterMark: PIECE_BYTES });
    this.#handle = handle;
    this.#at = start;
    this.#end = end;
  }

  override _read(): void {
    const length = Math.min(PIECE_BYTES, this.#end + 1 - this.#at);
    if (length <= 0) {
      this.push(null);
      return;
    }
    this.#handle.read(Buffer.allocUnsafe(length), 0, length, this.#at).then(
      ({ buffer, bytesRead }) => {
        if (bytesRead === 0) return void this.destroy(new Error('the file ended before the bytes announced'));
        this.#at += bytesRead;
        this.push(bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead));
      },
      (error: Error) => this.destroy(error),
    );
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.#handle.close().then(
      () => done(error),
      () => done(error),
    );
  }

  /**
   * Sends the bytes to `out` and ends it; resolves when all of it was handed to `out`, or once `out`
   * closed early. A failed read destroys `out` (its client sees the answer cut short, as with a pipe).
   * The stream is then done: the handle is closed either way. `onPiece` is told each piece's bytes as
   * they are handed to `out` (a progress bar).
   */
  async writeTo(out: Writable, onPiece: (bytes: number) => void = () => {}): Promise<void> {
    if (this.#taken) throw new Error('FileRangeStream#writeTo: the stream was already read');
    this.#taken = true;
    // No more buffers, and none larger, than the bytes need: a small file's upload took 4 MiB for 100 bytes,
    // and putting a folder of 10 000 such files spent its time faulting in buffers (2 ms of CPU a file).
    const bytes = this.#end + 1 - this.#at;
    const pieceBytes = Math.max(1, Math.min(PIECE_BYTES, bytes));
    const free: Buffer[] = Array.from(
      { length: Math.max(1, Math.min(ROTATION, Math.ceil(bytes / pieceBytes))) },
      () => (pieceBytes === PIECE_BYTES ? spare.pop() : undefined) ?? Buffer.allocUnsafeSlow(pieceBytes),
    );
    const waiting: ((buffer: Buffer) => void)[] = [];
    const take = () => (free.length > 0 ? Promise.resolve(free.pop()!) : new Promise<Buffer>((resolve) => waiting.push(resolve)));
    const give = (buffer: Buffer) => {
      const next = waiting.shift();
      if (next !== undefined) next(buffer);
      else free.push(buffer);
    };
    let gone = false;
    const closed = new Promise<void>((resolve) => out.once('close', resolve)).then(() => {
      gone = true;
      for (const next of waiting.splice(0)) next(Buffer.alloc(0)); // no write will free one: let the loop see it is over
    });
    // Set when a write fills the writable: waited for before the next write, not before the next read.
    let drained: Promise<unknown> = Promise.resolve();
    try {
      while (this.#at <= this.#end && !gone) {
        const buffer = await take();
        if (gone) break;
        // Read while the socket still sends the earlier pieces; write once it asks for more.
        const { bytesRead } = await this.#handle.read(buffer, 0, Math.min(buffer.length, this.#end + 1 - this.#at), this.#at);
        if (bytesRead === 0) throw new Error('the file ended before the bytes announced');
        this.#at += bytesRead;
        await Promise.race([drained, closed]);
        if (gone) break;
        // The callback runs once the socket has the bytes (or failed): only then may the buffer be read into again.
        if (!out.write(bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead), () => give(buffer))) {
          drained = new Promise((resolve) => out.once('drain', resolve));
        }
        onPiece(bytesRead);
      }
      if (!gone) out.end();
    } catch (error) {
      out.destroy(error as Error);
    } finally {
      this.destroy();
      // Only buffers the socket is done with: one still being sent must not be read into by another send.
      if (pieceBytes === PIECE_BYTES) spare.push(...free.splice(0, SPARE_BUFFERS - spare.length));
    }
  }
}
