/**
 * Deploy-time rules: the plan gate, then the claims. Both run before
 * anything of the deploy changes; a refusal undoes the claims this deploy
 * made, so a refused deploy leaves the state as it found it.
 */
import { SvcError, type AppSpec } from 'svc/plugin';
import { type DomainRecords, newToken, type DomainRecord } from './records.js';

/** The plans that include custom domains. */
export const DOMAIN_PLANS: readonly string[] = ['team', 'business'];

export interface Wanted {
  readonly domain: string;
  readonly workload: string;
}

/** The domains an app asks for, lower case; `bad_request` when two workloads ask for the same one. */
export function wantedDomains(app: AppSpec): Wanted[] {
  const wanted: Wanted[] = [];
  for (const workload of app.workloads) {
    const raw = workload.http?.domain;
    if (!raw) continue;
    const domain = normalize(raw);
    const twin = wanted.find((w) => w.domain === domain);
    if (twin)
      throw new SvcError(
        'bad_request',
        `the workloads ${twin.workload} and ${workload.name} both set domain=${JSON.stringify(domain)}; a domain serves one workload`,
      );
    wanted.push({ domain, workload: workload.name });
  }
  return wanted;
}

export function normalize(domain: string): string {
  const lower = domain.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** `plan_forbids_domain` naming the first domain, the plan and the plans that allow it. */
export function checkPlan(workspace: string, plan: string, wanted: readonly Wanted[]): void {
  if (wanted.length === 0 || DOMAIN_PLANS.includes(plan)) return;
  const { domain, workload } = wanted[0]!;
  throw new SvcError(
    'plan_forbids_domain',
    `${workload} sets domain=${JSON.stringify(domain)}, but the workspace ${JSON.stringify(workspace)} is on the ${plan} plan; custom domains need the ${DOMAIN_PLANS.join(' or ')} plan. Nothing was deployed.`,
    {
      hint: `Ask the server's operator to move the workspace to ${DOMAIN_PLANS.join(' or ')} (svc workspace plan ${workspace} team), or deploy without domain.`,
      details: { domain, workspace, plan, allowed: DOMAIN_PLANS },
    },
  );
}

/**
 * Claims each domain for `workspace` and points it at its workload. A name
 * another workspace holds is `domain_taken`, and the claims made so far are
 * released again. Returns the records as stored.
 */
export async function claimAll(
  records: DomainRecords,
  workspace: string,
  app: string,
  wanted: readonly Wanted[],
  now: () => Date,
): Promise<DomainRecord[]> {
  const made: { domain: string; modifyIndex: number }[] = [];
  const claimed: DomainRecord[] = [];
  try {
    for (const { domain, workload } of wanted) {
      const result = await claimOne(records, workspace, app, domain, workload, now);
      if (result.created) made.push({ domain, modifyIndex: result.modifyIndex });
      claimed.push(result.record);
    }
    return claimed;
  } catch (error) {
    // Only what this deploy created, and only if untouched since: a concurrent change is not ours to undo.
    for (const { domain, modifyIndex } of made) await records.release(domain, modifyIndex).catch(() => false);
    throw error;
  }
}

async function claimOne(
  records: DomainRecords,
  workspace: string,
  app: string,
  domain: string,
  workload: string,
  now: () => Date,
): Promise<{ record: DomainRecord; created: boolean; modifyIndex: number }> {
  for (;;) {
    const stored = await records.get(domain);
    if (stored === null) {
      const fresh: DomainRecord = {
        domain,
        workspace,
        app,
        workload,
        token: newToken(),
        claimedAt: now().toISOString(),
        verifiedAt: null,
        suspendedAt: null,
      };
      if (await records.put(fresh, 0)) {
        const after = await records.get(domain);
        return { record: fresh, created: true, modifyIndex: after?.modifyIndex ?? -1 };
      }
      continue; // someone claimed it between our read and write: read again and judge
    }
    if (stored.record.workspace !== workspace) {
      throw new SvcError('domain_taken', `the domain ${JSON.stringify(domain)} belongs to another workspace. Nothing was deployed.`, {
        hint: 'A host name serves one workspace; choose another domain.',
        details: { domain },
      });
    }
    if (stored.record.app === app && stored.record.workload === workload)
      return { record: stored.record, created: false, modifyIndex: stored.modifyIndex };
    // The workspace's own name, moved to another workload: verification stays (the workspace proved it owns the name).
    const moved: DomainRecord = { ...stored.record, app, workload };
    if (await records.put(moved, stored.modifyIndex)) return { record: moved, created: false, modifyIndex: -1 };
  }
}
