/**
 * Workspace records in the state store, under `workspaces/<name>`. Creation
 * is compare-and-set on an absent key, so two servers starting at once still
 * create `default` exactly once.
 */
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import { storedJson, storedObject, storedOneOf, storedString } from '../../model/store/stored-fields.js';
import { SvcError } from '../../model/errors.js';
import { getJson, putJson, type JsonEntry } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import { checkName } from '../../model/names.js';
import { planChanges, recordPlanChange, type PlanChange } from './plan-changes.js';
import { DEFAULT_WORKSPACE_NAME, PLANS, type Plan, type Workspace } from './types.js';

const PREFIX = 'workspaces/';

export function workspaceKey(name: string): string {
  return `${PREFIX}${name}`;
}

/** Returns `plan` when it is one of the plans; throws `bad_request` otherwise. */
export function checkPlan(plan: unknown): Plan {
  if (typeof plan === 'string' && (PLANS as readonly string[]).includes(plan)) return plan as Plan;
  throw new SvcError('bad_request', `the plan ${JSON.stringify(plan) ?? String(plan)} is not one of ${PLANS.join(', ')}`, {
    hint: `Set the plan to ${PLANS.map((p) => `"${p}"`).join(', ')}.`,
    details: { field: 'plan', allowed: PLANS },
  });
}

/** Who changes a plan: an account id, and whether it is the server's operator (`Accounts#isOperator`). */
export interface Operator {
  readonly subject: string;
  readonly operator: boolean;
}

export class Workspaces {
  readonly #store: StateStore;
  readonly #clock: Clock;

  constructor(store: StateStore, clock: Clock = systemClock) {
    this.#store = store;
    this.#clock = clock;
  }

  async get(name: string): Promise<Workspace | null> {
    return (await this.#read(name))?.value ?? null;
  }

  /** The workspace, or `not_found`. */
  async require(name: string): Promise<Workspace> {
    const workspace = await this.get(name);
    if (workspace === null)
      throw new SvcError('not_found', `there is no workspace ${JSON.stringify(name)}`, { details: { workspace: name } });
    return workspace;
  }

  async list(): Promise<Workspace[]> {
    return (await this.#store.list(PREFIX)).map((entry) => storedJson(entry, parseWorkspace));
  }

  /** Creates a workspace; `name_invalid` for a bad name, `conflict` when it exists. */
  async create(name: unknown, plan: unknown = 'free'): Promise<Workspace> {
    const workspace = this.#record(checkName('workspace', name), checkPlan(plan));
    if (!(await putJson(this.#store, workspaceKey(workspace.name), workspace, { cas: 0 }))) {
      throw new SvcError('conflict', `the workspace ${JSON.stringify(workspace.name)} already exists`, {
        details: { workspace: workspace.name },
      });
    }
    return workspace;
  }

  /** Creates `default` on first start; afterwards returns it unchanged. */
  async ensureDefault(): Promise<{ workspace: Workspace; created: boolean }> {
    const fresh = this.#record(DEFAULT_WORKSPACE_NAME, 'free');
    if (await putJson(this.#store, workspaceKey(fresh.name), fresh, { cas: 0 })) return { workspace: fresh, created: true };
    return { workspace: await this.require(fresh.name), created: false };
  }

  /**
   * Sets the plan. Only the server's operator may (`not_operator` for anyone
   * else, a workspace's owner included: gating by plan would mean nothing if
   * owners could raise their own). The change is recorded first, with who
   * and when; an unchanged plan records nothing.
   */
  async setPlan(name: string, plan: unknown, by: Operator): Promise<{ workspace: Workspace; change: PlanChange | null }> {
    const wanted = checkPlan(plan);
    if (!by.operator) {
      throw new SvcError(
        'not_operator',
        `only the server's operator may change the plan of workspace ${JSON.stringify(name)}; ${by.subject} is not the operator`,
        {
          hint: "A workspace's owner can read its plan (svc workspace plan); ask the server's operator to change it.",
        },
      );
    }
    // Read-modify-write with compare-and-set: a concurrent change is retried, never lost.
    for (;;) {
      const entry = await this.#read(name);
      if (entry === null)
        throw new SvcError('not_found', `there is no workspace ${JSON.stringify(name)}`, { details: { workspace: name } });
      if (entry.value.plan === wanted) return { workspace: entry.value, change: null };
      const change: PlanChange = { workspace: name, from: entry.value.plan, to: wanted, by: by.subject, at: isoAt(this.#clock()) };
      const updated: Workspace = { ...entry.value, plan: wanted };
      const record = await recordPlanChange(this.#store, change);
      if (await putJson(this.#store, entry.key, updated, { cas: entry.modifyIndex })) return { workspace: updated, change };
      await this.#store.delete(record); // another change came first: this one did not happen
    }
  }

  /** Every change of the workspace's plan, oldest first. */
  planChanges(name: string): Promise<PlanChange[]> {
    return planChanges(this.#store, checkName('workspace', name));
  }

  #record(name: string, plan: Plan): Workspace {
    return { name, plan, createdAt: isoAt(this.#clock()) };
  }

  #read(name: string): Promise<JsonEntry<Workspace> | null> {
    return getJson(this.#store, workspaceKey(checkName('workspace', name)), parseWorkspace);
  }
}

function parseWorkspace(value: unknown, key: string): Workspace {
  const record = storedObject(value, key);
  return {
    name: storedString(record, 'name', key),
    plan: storedOneOf(record, 'plan', key, PLANS),
    createdAt: storedString(record, 'createdAt', key),
  };
}
