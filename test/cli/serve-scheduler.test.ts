import assert from 'node:assert/strict';
import { ReloadScheduler, type Clock, type ReloadBatch } from '../../cli/serve/scheduler.js';

/** A clock that moves only when told, firing due timers in order. */
class FakeClock implements Clock {
  time = 0;
  #timers: Array<{ at: number; callback: () => void; id: number }> = [];
  #serial = 0;

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = ++this.#serial;
    this.#timers.push({ at: this.time + ms, callback, id });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((timer) => timer.id !== handle);
  }

  get pending(): number {
    return this.#timers.length;
  }

  /** Moves time forward by `ms`, firing the timers that fall due. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const next = this.#timers.filter((timer) => timer.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.#timers = this.#timers.filter((timer) => timer !== next);
      this.time = next.at;
      next.callback();
    }
    this.time = end;
  }
}

/** A run that stays in progress until the test finishes it. */
function controlledRuns() {
  const batches: ReloadBatch[] = [];
  const finishers: Array<() => void> = [];
  let active = 0;
  let maxActive = 0;
  const run = (batch: ReloadBatch) => {
    batches.push(batch);
    active += 1;
    maxActive = Math.max(maxActive, active);
    return new Promise<void>((resolve) =>
      finishers.push(() => {
        active -= 1;
        resolve();
      }),
    );
  };
  return {
    run,
    batches,
    get maxActive() {
      return maxActive;
    },
    /** Ends the oldest run still going and lets its promise callbacks run. */
    async finish() {
      finishers.shift()!();
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
  };
}

describe('ReloadScheduler', () => {
  it('gathers a burst of events into one reload once the files stay quiet', () => {
    const clock = new FakeClock();
    const runs = controlledRuns();
    const scheduler = new ReloadScheduler(runs.run, { quietMs: 20, maxWaitMs: 200, clock });
    scheduler.notify('app.py');
    clock.advance(5);
    scheduler.notify('.app.py.swx');
    clock.advance(5);
    scheduler.notify('app.py');
    clock.advance(19);
    assert.equal(runs.batches.length, 0, 'still within the quiet period of the last event');
    clock.advance(1);
    assert.deepEqual(runs.batches, [{ paths: ['app.py', '.app.py.swx'], firstAt: 0 }]);
  });

  it('does not wait longer than maxWaitMs after the first event of a burst that never stops', () => {
    const clock = new FakeClock();
    const runs = controlledRuns();
    const scheduler = new ReloadScheduler(runs.run, { quietMs: 20, maxWaitMs: 50, clock });
    for (let i = 0; i < 10; i++) {
      scheduler.notify(`file${i}.py`);
      clock.advance(10);
    }
    assert.equal(runs.batches.length, 1);
    assert.equal(runs.batches[0]!.firstAt, 0);
    assert.deepEqual(runs.batches[0]!.paths, ['file0.py', 'file1.py', 'file2.py', 'file3.py', 'file4.py']);
  });

  it('never runs two reloads at once, and gathers the saves made during one into exactly one more', async () => {
    const clock = new FakeClock();
    const runs = controlledRuns();
    const scheduler = new ReloadScheduler(runs.run, { quietMs: 10, maxWaitMs: 100, clock });
    scheduler.notify('a.py');
    clock.advance(10);
    assert.equal(runs.batches.length, 1);
    scheduler.notify('b.py');
    clock.advance(50);
    scheduler.notify('c.py');
    clock.advance(500);
    assert.equal(runs.batches.length, 1, 'the running reload is not joined by another');
    assert.ok(scheduler.busy);
    await runs.finish();
    clock.advance(0);
    assert.deepEqual(runs.batches[1], { paths: ['b.py', 'c.py'], firstAt: 10 }, 'the last save is not lost');
    await runs.finish();
    clock.advance(1000);
    assert.equal(runs.batches.length, 2, 'nothing more to do');
    assert.equal(runs.maxActive, 1);
  });

  it('after a reload, waits for the quiet period of a save that came at its very end', async () => {
    const clock = new FakeClock();
    const runs = controlledRuns();
    const scheduler = new ReloadScheduler(runs.run, { quietMs: 10, maxWaitMs: 100, clock });
    scheduler.notify('a.py');
    clock.advance(10);
    clock.advance(30);
    scheduler.notify('b.py');
    await runs.finish();
    clock.advance(9);
    assert.equal(runs.batches.length, 1);
    clock.advance(1);
    assert.equal(runs.batches.length, 2);
  });

  it('gathers events while paused and reloads once when resumed', () => {
    const clock = new FakeClock();
    const runs = controlledRuns();
    const scheduler = new ReloadScheduler(runs.run, { quietMs: 10, clock, paused: true });
    scheduler.notify('a.py');
    clock.advance(1000);
    assert.equal(runs.batches.length, 0);
    scheduler.resume();
    clock.advance(0);
    assert.deepEqual(runs.batches, [{ paths: ['a.py'], firstAt: 0 }]);
  });

  it('keeps going after a failed reload', async () => {
    const clock = new FakeClock();
    const batches: ReloadBatch[] = [];
    const scheduler = new ReloadScheduler(
      async (batch) => {
        batches.push(batch);
        throw new Error('boom');
      },
      { quietMs: 10, clock },
    );
    scheduler.notify('a.py');
    clock.advance(10);
    for (let i = 0; i < 5; i++) await Promise.resolve();
    scheduler.notify('b.py');
    clock.advance(10);
    assert.equal(batches.length, 2);
  });

  it('starts nothing once closed, and close() waits for the reload running', async () => {
    const clock = new FakeClock();
    const runs = controlledRuns();
    const scheduler = new ReloadScheduler(runs.run, { quietMs: 10, clock });
    scheduler.notify('a.py');
    clock.advance(10);
    scheduler.notify('b.py');
    let closed = false;
    const closing = scheduler.close().then(() => (closed = true));
    await Promise.resolve();
    assert.equal(closed, false);
    await runs.finish();
    await closing;
    clock.advance(1000);
    scheduler.notify('c.py');
    clock.advance(1000);
    assert.equal(runs.batches.length, 1);
    assert.equal(clock.pending, 0);
  });
});
