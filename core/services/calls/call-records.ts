/**
 * Spawned calls in the state store: the record at `calls/<workspace>/<id>`, the pickled or JSON
 * input at `call-inputs/<workspace>/<id>`, the final frame at `call-outcomes/<workspace>/<id>` and
 * what it printed at `call-logs/<workspace>/<id>`, each within the store's value limit. Changes of status are compare-and-set on the record, so
 * a call is started once per attempt and ends once, whichever replica or restart writes.
 */
import { SvcError } from '../../model/errors.js';
import { getJson, type JsonEntry, putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import type { CallLogs, CallRecord, FinalFrame } from './types.js';

const RECORDS = 'calls/';
const INPUTS = 'call-inputs/';
const OUTCOMES = 'call-outcomes/';
const LOGS = 'call-logs/';

export class CallRecords {
  readonly #store: StateStore;
  readonly #report: (error: unknown) => void;

  /** `report` is told of a record that cannot be read: a listing skips it rather than fail for every call. */
  constructor(store: StateStore, report: (error: unknown) => void = () => {}) {
    this.#store = store;
    this.#report = report;
  }

  /** Stores the input first, then the record: a record is never without its input. */
  async create(record: CallRecord, input: Buffer): Promise<void> {
    const created = await this.#inOrder(
      () => this.#store.put(`${INPUTS}${record.workspace}/${record.id}`, input),
      () => putJson(this.#store, recordKey(record.workspace, record.id), record, { cas: 0 }),
    );
    if (!created) throw new SvcError('internal', `a call ${record.id} exists already`);
  }

  /**
   * Stores how an attempt ended, then `ended` (its record) if that is still at `modifyIndex`:
   * a record never says ended without its outcome. False when something else changed the record
   * first (a cancel), or when there is no record to end (`ended` null: the outcome alone).
   */
  end(workspace: string, id: string, frame: FinalFrame, ended: { record: CallRecord; modifyIndex: number } | null): Promise<boolean> {
    const storeOutcome = () => putJson(this.#store, `${OUTCOMES}${workspace}/${id}`, frame);
    if (ended === null) return storeOutcome().then(() => false);
    return this.#inOrder(storeOutcome, () => this.update(ended.record, ended.modifyIndex));
  }

  /**
   * `first`, then `second`. A store that makes writes queued together durable in order takes both
   * in one batch (one synchronous write: a spawn answers sooner); on another store `second` is
   * sent once `first` is durable, and only if it succeeded.
   */
  async #inOrder(first: () => Promise<boolean>, second: () => Promise<boolean>): Promise<boolean> {
    if (!this.#store.ordersWrites) return (await first()) && (await second());
    const [a, b] = await Promise.all([first(), second()]);
    return a && b;
  }

  get(workspace: string, id: string): Promise<JsonEntry<CallRecord> | null> {
    return getJson(this.#store, recordKey(workspace, id), validRecord);
  }

  /** Every call of every workspace (the leader's recovery and clean-up). */
  all(): Promise<JsonEntry<CallRecord>[]> {
    return this.#listed(RECORDS);
  }

  /** The calls of one workspace (`svc app calls`): only its keys are read. */
  ofWorkspace(workspace: string): Promise<JsonEntry<CallRecord>[]> {
    return this.#listed(`${RECORDS}${workspace}/`);
  }

  /** Replaces the record if it is still at `modifyIndex`; false when something else changed it first. */
  update(record: CallRecord, modifyIndex: number): Promise<boolean> {
    return putJson(this.#store, recordKey(record.workspace, record.id), record, { cas: modifyIndex });
  }

  async input(workspace: string, id: string): Promise<Buffer | null> {
    return (await this.#store.get(`${INPUTS}${workspace}/${id}`))?.value ?? null;
  }

  async outcome(workspace: string, id: string): Promise<FinalFrame | null> {
    return (await getJson(this.#store, `${OUTCOMES}${workspace}/${id}`, (value) => value as FinalFrame))?.value ?? null;
  }

  async putLogs(workspace: string, id: string, logs: CallLogs): Promise<void> {
    await putJson(this.#store, `${LOGS}${workspace}/${id}`, logs);
  }

  /** What the call printed so far; null before its first line. */
  async logs(workspace: string, id: string): Promise<CallLogs | null> {
    return (await getJson(this.#store, `${LOGS}${workspace}/${id}`, (value) => value as CallLogs))?.value ?? null;
  }

  /** Drops the input, the outcome and the logs, keeping the record (an expired call says it expired). */
  async dropPayloads(workspace: string, id: string): Promise<void> {
    for (const prefix of [INPUTS, OUTCOMES, LOGS]) await this.#store.delete(`${prefix}${workspace}/${id}`);
  }

  async remove(workspace: string, id: string): Promise<void> {
    await this.dropPayloads(workspace, id);
    await this.#store.delete(recordKey(workspace, id));
  }

  async #listed(prefix: string): Promise<JsonEntry<CallRecord>[]> {
    const listed: JsonEntry<CallRecord>[] = [];
    for (const entry of await this.#store.list(prefix)) {
      try {
        listed.push({ ...entry, value: validRecord(parsed(entry.value, entry.key), entry.key) });
      } catch (error) {
        this.#report(error);
      }
    }
    return listed;
  }
}

function recordKey(workspace: string, id: string): string {
  return `${RECORDS}${workspace}/${id}`;
}

function parsed(value: Buffer, key: string): unknown {
  try {
    return JSON.parse(value.toString('utf8'));
  } catch (error) {
    throw new SvcError('state_corrupt', `the call record at ${JSON.stringify(key)} is not valid JSON`, { details: { key }, cause: error });
  }
}

function validRecord(value: unknown, key: string): CallRecord {
  const record = value as Partial<CallRecord> | null;
  if (record === null || typeof record !== 'object' || typeof record.id !== 'string' || typeof record.status !== 'string') {
    throw new SvcError('state_corrupt', `the call record at ${JSON.stringify(key)} is not a call`, { details: { key } });
  }
  return record as CallRecord;
}
