/**
 * Who admission asks about a unit with no free slot (UnitSupervisor), on a
 * replica that may follow. The leader's autoscaler decides for the units it
 * manages. A follower starts nothing itself: a request for a unit with no
 * instance waits (the unit scales from zero on the leader) and the replica
 * notices its load right away, so that its load report tells the leader's
 * autoscaler (load-report.ts, peer-load.ts).
 */
import type { UnitSupervisor } from '../gateway/admission.js';
import { noCapacityError, startingError } from '../../services/autoscale/wait-errors.js';

export interface ReplicaSupervisorOptions {
  /** The leader's autoscaler (this replica's, once it leads). */
  readonly autoscaler: UnitSupervisor;
  /** True while this replica leads (its autoscaler scales). */
  leads(): boolean;
  /** A request for `unit` queued (or, `refused`, could not wait) on this follower: report the load soon. */
  notice(unit: string, refused: boolean): void;
  /** Whether the registry lists instances of the unit (then a timed-out wait means busy, not starting). */
  hasInstances(unit: string): boolean;
}

export function replicaSupervisor(options: ReplicaSupervisorOptions): UnitSupervisor {
  const { autoscaler } = options;
  const own = (unit: string) => autoscaler.manages(unit) || options.leads();
  return {
    // Every unit a follower routes is one of the leader's deployments, scaled there.
    manages: (unit) => autoscaler.manages(unit) || !options.leads(),
    queued: (unit) => (own(unit) ? autoscaler.queued(unit) : options.notice(unit, false)),
    refused: (unit) => (own(unit) ? autoscaler.refused(unit) : options.notice(unit, true)),
    refusal: (unit) => (own(unit) ? autoscaler.refusal(unit) : null),
    waitError: (unit, waitedMs) => {
      if (own(unit)) return autoscaler.waitError(unit, waitedMs);
      return options.hasInstances(unit) ? noCapacityError(waitedMs) : startingError(waitedMs);
    },
    waitReason: (unit) => (own(unit) ? (autoscaler.waitReason?.(unit) ?? null) : null),
  };
}
