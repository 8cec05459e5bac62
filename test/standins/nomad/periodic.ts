/**
 * Periodic batch jobs in the Nomad stand-in, as Nomad's periodic dispatcher
 * (nomad/periodic.go) runs them: a periodic parent gets no allocation of its
 * own; on each tick of its `Spec` (read in its `TimeZone`) a child job
 * `<parent>/periodic-<unix seconds>` with `ParentID` is registered and
 * placed like any batch job; with `ProhibitOverlap` a tick is skipped while
 * a child still runs. Deregistering the parent stops the ticks.
 */
import { CronExpressionParser } from 'cron-parser';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface PeriodicHost {
  /** Registers a child job (stored, evaluated, placed). */
  launch(child: Json): void;
  /** Whether a child of the parent still has a live allocation (or none yet). */
  running(namespace: string, parentId: string): boolean;
}

export class PeriodicDispatcher {
  readonly #timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly host: PeriodicHost) {}

  /** Starts (or restarts, for a new version) the ticks of a periodic parent. */
  track(job: Json): void {
    this.untrack(job.Namespace, job.ID);
    const next = nextLaunch(job, new Date());
    if (next === null) return;
    const timer = setTimeout(
      () => {
        this.#timers.delete(keyOf(job.Namespace, job.ID));
        if (!(job.Periodic.ProhibitOverlap && this.host.running(job.Namespace, job.ID))) {
          const child = structuredClone(job);
          const id = `${job.ID}/periodic-${Math.floor(next.getTime() / 1000)}`;
          // As Nomad's deriveJob (nomad/periodic.go): the child's Name is its ID too, not the parent's Name.
          Object.assign(child, { ID: id, Name: id, ParentID: job.ID, Periodic: null });
          this.host.launch(child);
        }
        this.track(job);
      },
      Math.max(0, next.getTime() - Date.now()),
    );
    timer.unref();
    this.#timers.set(keyOf(job.Namespace, job.ID), timer);
  }

  untrack(namespace: string, id: string): void {
    clearTimeout(this.#timers.get(keyOf(namespace, id)));
    this.#timers.delete(keyOf(namespace, id));
  }

  close(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}

export function isPeriodicParent(job: Json): boolean {
  return job.Periodic != null && job.Periodic.Enabled !== false && !job.ParentID;
}

/** The next tick of the parent's cron spec (Nomad's cronexpr forms: 5 fields; 7 with seconds first and a year). */
export function nextLaunch(job: Json, after: Date): Date | null {
  const fields = String(job.Periodic.Spec ?? '')
    .trim()
    .split(/\s+/);
  const secondsFirst = fields.length === 7 ? fields.slice(0, 6) : fields.length === 6 ? ['0', ...fields.slice(0, 5)] : ['0', ...fields];
  try {
    return CronExpressionParser.parse(secondsFirst.join(' '), { currentDate: after, tz: job.Periodic.TimeZone || 'UTC' })
      .next()
      .toDate();
  } catch {
    return null;
  }
}

function keyOf(namespace: string, id: string): string {
  return `${namespace}/${id}`;
}
