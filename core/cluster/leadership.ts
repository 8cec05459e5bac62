/**
 * A replica's life around the leader election (`state: consul`): a follower
 * (replica-sync.ts) until it wins; then it takes over (restores the deployments, purges what
 * it does not run) and serves; it lets go of the workloads when it loses the
 * leadership. A take-over that fails gives the leadership up at once rather
 * than hold the lock while serving nothing, so another replica can try; in
 * both cases `onLeadershipLost` tells `svc server`, which exits so that its
 * supervisor starts it again as a fresh follower.
 */
import { startLeaderElection } from './leader.js';
import type { ReplicaRole } from './replica-gate.js';
import type { LeaderElection } from './types.js';

export interface LeadershipOptions {
  readonly consul: { readonly address: string; readonly token?: string };
  /** The lock key, `<consulPrefix>leader`. */
  readonly key: string;
  /** This replica's address, shown in the lock key's value. */
  readonly advertise: string;
  /** Restores the deployments and purges the jobs it does not run; `signal` aborts when the leadership is lost. */
  takeOver(signal: AbortSignal): Promise<void>;
  setRole(role: ReplicaRole): void;
  /** Stop touching the workloads: the new leader runs them. */
  letGo(): void;
  log(text: string): void;
  report(error: unknown): void;
  onLeadershipLost?(reason: string): void;
}

export function startLeadership(options: LeadershipOptions): LeaderElection {
  let failure: string | undefined;
  let closing = false;
  const election = startLeaderElection({
    consul: options.consul,
    key: options.key,
    advertise: options.advertise,
    onElected: async (lost) => {
      options.log('this svc replica leads: it restores the deployments and serves');
      options.setRole('starting');
      try {
        await options.takeOver(lost);
        if (!lost.aborted) options.setRole('ready');
      } catch (error) {
        if (lost.aborted) return; // demoted meanwhile: onDemoted said so
        failure = error instanceof Error ? error.message : String(error);
        options.report(error);
        void election.close();
      }
    },
    onDemoted: (reason) => {
      options.setRole('standby');
      options.letGo();
      const why = failure === undefined ? reason : `its take-over failed: ${failure}`;
      options.log(`this svc replica no longer leads (${why}): it lets go of the workloads`);
      if (!closing || failure !== undefined) options.onLeadershipLost?.(why);
    },
    report: options.report,
  });
  return {
    isLeader: () => election.isLeader(),
    leaderAddress: () => election.leaderAddress(),
    close() {
      closing = true;
      return election.close();
    },
  };
}
