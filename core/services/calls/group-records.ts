/**
 * Call groups in the state store: the record at `call-groups/<workspace>/<id>`, changed by
 * compare-and-set (two batches of one group never lose each other's count). Its inputs are calls
 * (call-records.ts) whose ids follow from the group's id and their index (`memberId`): an input is
 * found by its index without an index of its own, and a batch sent twice records each input once.
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../../model/errors.js';
import { getJson, type JsonEntry, putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import type { CallGroupRecord } from './types.js';

const GROUPS = 'call-groups/';

/** The call id of a group's input `index`: `call-` and 20 hex digits, as every call's. */
export function memberId(groupId: string, index: number): string {
  return `call-${createHash('sha256').update(`${groupId}/${index}`).digest('hex').slice(0, 20)}`;
}

export class GroupRecords {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  async create(group: CallGroupRecord): Promise<void> {
    if (!(await putJson(this.#store, keyOf(group.workspace, group.id), group, { cas: 0 }))) {
      throw new SvcError('internal', `a call group ${group.id} exists already`);
    }
  }

  get(workspace: string, id: string): Promise<JsonEntry<CallGroupRecord> | null> {
    return getJson(this.#store, keyOf(workspace, id), (value) => value as CallGroupRecord);
  }

  /** Replaces the record if it is still at `modifyIndex`; false when another batch changed it first. */
  update(group: CallGroupRecord, modifyIndex: number): Promise<boolean> {
    return putJson(this.#store, keyOf(group.workspace, group.id), group, { cas: modifyIndex });
  }

  /** Every group of every workspace (the leader's clean-up). */
  async all(): Promise<CallGroupRecord[]> {
    return (await this.#store.list(GROUPS)).map((entry) => JSON.parse(entry.value.toString('utf8')) as CallGroupRecord);
  }

  async remove(workspace: string, id: string): Promise<void> {
    await this.#store.delete(keyOf(workspace, id));
  }
}

function keyOf(workspace: string, id: string): string {
  return `${GROUPS}${workspace}/${id}`;
}
