/**
 * The record of every plan change, who made it and when: one key per change
 * under `plan-changes/<workspace>/`, written before the workspace's plan
 * itself, so that no plan ever changes without its record.
 */
import { randomBytes } from 'node:crypto';
import { storedJson, storedObject, storedOneOf, storedString } from '../../model/store/stored-fields.js';
import { putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import { PLANS, type Plan } from './types.js';

export interface PlanChange {
  readonly workspace: string;
  readonly from: Plan;
  readonly to: Plan;
  /** The operator's account id. */
  readonly by: string;
  /** ISO 8601. */
  readonly at: string;
}

const PREFIX = 'plan-changes/';

/** Writes the record; returns its key (to remove it should the plan's own write lose a race). */
export async function recordPlanChange(store: StateStore, change: PlanChange): Promise<string> {
  // The time first, so that keys list in order; a random tail keeps two changes in one millisecond apart.
  const key = `${PREFIX}${change.workspace}/${change.at}-${randomBytes(4).toString('hex')}`;
  await putJson(store, key, change, { cas: 0 });
  return key;
}

/** Oldest first: in the order they were written (the store's create index), whatever the clock said. */
export async function planChanges(store: StateStore, workspace: string): Promise<PlanChange[]> {
  const entries = await store.list(`${PREFIX}${workspace}/`);
  return entries.sort((a, b) => a.createIndex - b.createIndex).map((entry) => storedJson(entry, parseChange));
}

function parseChange(value: unknown, key: string): PlanChange {
  const record = storedObject(value, key);
  return {
    workspace: storedString(record, 'workspace', key),
    from: storedOneOf(record, 'from', key, PLANS),
    to: storedOneOf(record, 'to', key, PLANS),
    by: storedString(record, 'by', key),
    at: storedString(record, 'at', key),
  };
}
