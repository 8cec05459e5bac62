/**
 * Runs clean-up tasks (expired device codes, used or expired sign-in links)
 * every `intervalMs` on an unref'd timer, so it never keeps svc alive. One
 * round at a time; `stop()` waits for a round in progress, so the store is
 * never closed under it.
 */
export interface Sweeper {
  stop(): Promise<void>;
}

export function startSweeper(tasks: readonly (() => Promise<unknown>)[], intervalMs: number, report: (error: unknown) => void): Sweeper {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (running !== null) return;
    running = (async () => {
      for (const task of tasks) await task().catch(report);
    })().finally(() => (running = null));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
