/** A fixed-size buffer that keeps the last `capacity` items: adding past it drops the oldest. */
export class RingBuffer<T> {
  readonly #items: (T | undefined)[];
  /** Index of the next write. */
  #next = 0;
  #size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`ring buffer capacity must be a positive integer, got ${capacity}`);
    this.#items = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.#size;
  }

  push(item: T): void {
    this.#items[this.#next] = item;
    this.#next = (this.#next + 1) % this.capacity;
    if (this.#size < this.capacity) this.#size++;
  }

  /** The last `count` items (all by default), oldest first. */
  last(count = this.#size): T[] {
    const n = Math.min(Math.max(0, count), this.#size);
    const out: T[] = [];
    for (let i = n; i > 0; i--) out.push(this.#items[(this.#next - i + this.capacity) % this.capacity] as T);
    return out;
  }
}
