/**
 * A replica's life around the leader election (`state: consul`): a follower
 * (replica-sync.ts) until it wins; then it takes over (restores the deployments, purges what
 * it does not run) and serves; it lets go of the workloads when it loses the
 * leadership. A take-over that fails gives the leadership up at once rather
 * than hold the lock while serving nothing, so another replica can try; in
 * both cases `onLeadershipLost` tells `svc server`, which starts the
 * platform again as a fresh follower. A leader cut off from Consul (no
 * renewal for a TTL) lets go of the workloads too but goes on serving its
 * routes (`stranded`) and campaigns no more: `svc server` starts it again
 * once Consul answers.
 */
import { startLeaderElection } from './leader.js';
import type { ReplicaRole } from './replica-gate.js';
import type { LeaderElection, LeaderElectionOptions } from './types.js';

export interface LeadershipOptions {
  readonly consul: LeaderElectionOptions['consul'];
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
  /** `cutOff`: Consul stopped answering; the replica serves its routes (stranded) until it starts again. */
  onLeadershipLost?(reason: string, cutOff: boolean): void;
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
    onDemoted: (reason, cutOff) => {
      // Cut off from Consul, nothing says another replica leads: the routes it has are the best there are.
      const stranded = cutOff && failure === undefined && !closing;
      options.setRole(stranded ? 'stranded' : 'standby');
      options.letGo();
      const why = failure === undefined ? reason : `its take-over failed: ${failure}`;
      options.log(
        `this svc replica no longer leads (${why}): it lets go of the workloads${stranded ? ' and serves the workload URLs it knew until Consul answers' : ''}`,
      );
      // It would win again with a platform that let go of everything: svc server starts a fresh one instead.
      if (stranded) void election.close();
      if (!closing || failure !== undefined) options.onLeadershipLost?.(why, stranded);
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
