/**
 * A map's outputs on their way to its one reader (`GET /api/v1/maps/:id/outputs`):
 * NDJSON lines kept in order until the reader's connection takes them. What
 * the map makes while nobody reads, or faster than its reader reads, waits
 * here, bounded: past `highWaterLines` lines or `HIGH_WATER_BYTES` the map
 * stops starting inputs (`full`), past `LIMIT_BYTES` it stops reading its
 * containers' answers too (`overLimit`), until the reader catches up
 * (`onDrain`). Lines handed to a connection that then breaks are lost with
 * it: a new reader gets what follows. Once the map ended and every line went
 * out, each reader gets the end line and its answer ends.
 */
import { Readable } from 'node:stream';
import { SvcError } from '../../model/errors.js';

/** Bytes of outputs kept for the reader before the map starts no more inputs. */
export const HIGH_WATER_BYTES = 1024 * 1024;
/** Bytes past which the map reads no more of its running inputs' answers either (what they print keeps coming). */
export const LIMIT_BYTES = 8 * 1024 * 1024;
/** Bytes given to the reader's connection in one chunk. */
const CHUNK_BYTES = 64 * 1024;

export interface OutputBufferOptions {
  /** Lines kept for the reader before the map starts no more inputs. */
  readonly highWaterLines: number;
  /** The buffer went back below its high water: the map may go on. */
  readonly onDrain: () => void;
  /** A reader came (true) or went (false). */
  readonly onReader: (attached: boolean) => void;
  /** The last line of every reader's answer once the map ended (`{"type": "end", …}`). */
  readonly endLine: () => string;
}

export class OutputBuffer {
  readonly #options: OutputBufferOptions;
  #lines: string[] = [];
  #head = 0;
  #bytes = 0;
  #ended = false;
  /** Nobody will read what is left (the map went unread): lines are no longer kept. */
  #dropped = false;
  #reader: Readable | null = null;
  /** The reader asked for more than there was. */
  #wanting = false;

  constructor(options: OutputBufferOptions) {
    this.#options = options;
  }

  /** The map should start no more inputs until `onDrain`. */
  get full(): boolean {
    return this.#bytes >= HIGH_WATER_BYTES || this.#lines.length - this.#head >= this.#options.highWaterLines;
  }

  /** The map should read no more of its answers until `onDrain`. */
  get overLimit(): boolean {
    return this.#bytes >= LIMIT_BYTES;
  }

  get reading(): boolean {
    return this.#reader !== null;
  }

  /** Every line went out (or was dropped) and the map ended. */
  get drained(): boolean {
    return this.#ended && this.#head === this.#lines.length;
  }

  /** One line, its `\n` included. */
  push(line: string): void {
    if (this.#dropped) return;
    this.#lines.push(line);
    this.#bytes += line.length;
    if (this.#wanting) this.#flush();
  }

  /** The map ended: once the lines kept went out, readers get the end line. */
  end(): void {
    this.#ended = true;
    if (this.#wanting) this.#flush();
  }

  /** Nobody reads: what is kept goes, and what comes is not kept. */
  drop(): void {
    const wasFull = this.full;
    this.#dropped = true;
    this.#lines = [];
    this.#head = 0;
    this.#bytes = 0;
    if (wasFull) this.#options.onDrain();
  }

  /** The one reader's answer; `conflict` while another reader is connected. */
  attach(): Readable {
    if (this.#reader !== null) {
      throw new SvcError('conflict', 'another client reads the outputs of this map; a map has one reader at a time.', {
        hint: 'Close the other connection first: the outputs it did not take then go to the next reader.',
      });
    }
    const reader: Readable = new Readable({
      highWaterMark: CHUNK_BYTES,
      read: () => {
        this.#wanting = true;
        this.#flush();
      },
      destroy: (error, callback) => {
        if (this.#reader === reader) {
          this.#reader = null;
          this.#wanting = false;
          this.#options.onReader(false);
        }
        callback(error);
      },
    });
    this.#reader = reader;
    this.#options.onReader(true);
    return reader;
  }

  /** Hands the reader what it asked for: kept lines, a chunk at a time; then, once the map ended, the end line. */
  #flush(): void {
    const reader = this.#reader;
    if (reader === null) return;
    const wasFull = this.full;
    while (this.#wanting && this.#head < this.#lines.length) {
      let chunk = '';
      while (this.#head < this.#lines.length && chunk.length < CHUNK_BYTES) chunk += this.#lines[this.#head++]!;
      this.#bytes -= chunk.length;
      this.#wanting = reader.push(chunk);
    }
    this.#compact();
    if (this.#wanting && this.drained) {
      this.#wanting = false;
      reader.push(this.#options.endLine());
      reader.push(null);
    }
    if (wasFull && !this.full) this.#options.onDrain();
  }

  /** Drops the lines that went out, once they are most of the array (a shift per line would copy it each time). */
  #compact(): void {
    if (this.#head === this.#lines.length) {
      this.#lines = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#lines.length) {
      this.#lines = this.#lines.slice(this.#head);
      this.#head = 0;
    }
  }
}
