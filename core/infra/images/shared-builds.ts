import type { BuildLog } from './types.js';

interface Job {
  readonly promise: Promise<unknown>;
  /** Every line so far, replayed to whoever joins late. */
  readonly lines: string[];
  readonly listeners: Set<BuildLog>;
}

/**
 * Builds in progress in this process, by the folder they produce. A build
 * asked for while the same one runs is joined rather than started again, and
 * every waiter gets the whole log: the lines so far at once, then the rest as
 * they come. Process-wide, so that two builders over one cache dir share too.
 */
const jobs = new Map<string, Job>();

export function sharedBuild<T>(id: string, log: BuildLog, work: (log: BuildLog) => Promise<T>): Promise<T> {
  let job = jobs.get(id);
  if (!job) {
    const lines: string[] = [];
    const listeners = new Set<BuildLog>();
    const emit: BuildLog = (line) => {
      lines.push(line);
      for (const listener of listeners) deliver(listener, line);
    };
    // Started on the next tick: the first waiter subscribes before any line is emitted.
    const promise = Promise.resolve()
      .then(() => work(emit))
      .finally(() => jobs.delete(id));
    job = { promise, lines, listeners };
    jobs.set(id, job);
  }
  const joined = job;
  // A wrapper per call: the same callback passed twice still gets each line twice, as asked.
  const listener: BuildLog = (line) => log(line);
  for (const line of joined.lines) deliver(listener, line);
  joined.listeners.add(listener);
  return (joined.promise as Promise<T>).finally(() => joined.listeners.delete(listener));
}

/** One waiter's failing log callback must not break the build for the others. */
function deliver(listener: BuildLog, line: string): void {
  try {
    listener(line);
  } catch {
    // Ignored: the build goes on.
  }
}
