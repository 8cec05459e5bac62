import { signalProcessGroup, stopGroup, type ExitStatus, type ProcessGroup } from './group.js';

export interface AdoptedGroupOptions {
  /** The leader's pid, which is also its process group id (it called setsid). */
  readonly pid: number;
  /** Resolves once the leader is gone, with its exit status when someone could tell. */
  readonly ended: Promise<ExitStatus>;
  /** Closes our end of the leader's lifeline (it then shuts down on its own). */
  readonly closeLifeline: () => void;
}

/**
 * A process group we did not spawn (a container forked by a checkpoint
 * template) but know by its leader's pid and a lifeline connection: stopped
 * and killed like a spawned one, through its process group.
 */
export function adoptGroup(options: AdoptedGroupOptions): ProcessGroup {
  let done = false;
  const signal = (s: NodeJS.Signals) => signalProcessGroup(options.pid, s);
  const exited = options.ended.then((status) => {
    done = true;
    signal('SIGKILL'); // the leader is gone: nothing of its group may stay
    return status;
  });
  return {
    pid: options.pid,
    exited,
    hasExited: () => done,
    async stop(graceMs) {
      await stopGroup(signal, exited, () => done, graceMs);
      options.closeLifeline();
    },
    killNow() {
      signal('SIGKILL');
    },
  };
}
