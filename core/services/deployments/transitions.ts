/**
 * One transition of an app at a time (a queue per app), in the order asked;
 * a failed one does not block the next. Every transition also waits for the
 * restore after a restart. Once svc stops, none starts (not even one queued),
 * and one the stop cut short fails with `shutting_down`.
 */
import { SvcError } from '../../model/errors.js';
import { changeRefusedError } from './offline.js';

export class AppTransitions {
  readonly #queues = new Map<string, Promise<void>>();
  readonly #closing: () => boolean;
  /** Settles once the restore is done (at once when it never runs). */
  #restored: Promise<void> = Promise.resolve();

  constructor(closing: () => boolean) {
    this.#closing = closing;
  }

  /** Transitions asked for from now on wait for `restoring` to settle. */
  waitFor(restoring: Promise<void>): void {
    this.#restored = restoring.then(
      () => {},
      () => {},
    );
  }

  /** Settles once the restore and every transition queued now have settled. */
  running(): Promise<unknown> {
    return Promise.all([this.#restored, ...this.#queues.values()]);
  }

  /** Runs `run` after the app's earlier transitions (`id`: the deployment's id). */
  run<T>(id: string, run: () => Promise<T>): Promise<T> {
    if (this.#closing()) return Promise.reject(changeRefusedError());
    const result = (this.#queues.get(id) ?? this.#restored)
      .then(() => {
        if (this.#closing()) throw changeRefusedError();
        return run();
      })
      .catch((error: unknown) => {
        throw this.#closing() && !(error instanceof SvcError && error.code === 'shutting_down') ? changeRefusedError(error) : error;
      });
    const settled = result.then(
      () => {},
      () => {},
    );
    this.#queues.set(id, settled);
    void settled.then(() => {
      if (this.#queues.get(id) === settled) this.#queues.delete(id);
    });
    return result;
  }
}
