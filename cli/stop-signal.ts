/** Stopping a long-running command (svc serve, svc server) on Ctrl-C or SIGTERM. */

/**
 * Resolves `wait` on the first SIGINT or SIGTERM after running the cleanup;
 * a second signal exits at once (the exit hook still kills every container).
 */
export function onStopSignal(cleanup: () => Promise<void>): { wait: Promise<void>; dispose: () => void } {
  let stopping = false;
  let resolveWait: () => void = () => {};
  const wait = new Promise<void>((resolve) => (resolveWait = resolve));
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(signal === 'SIGINT' ? 130 : 143);
    stopping = true;
    void cleanup().finally(resolveWait);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    wait,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
