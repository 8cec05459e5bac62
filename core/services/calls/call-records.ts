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

  /**
   * Stores the input first, then the record: a record is never without its input. A store that
   * makes writes durable in order takes both in one batch (one fsync: a spawn answers sooner).
   */
  async create(record: CallRecord, input: Buffer): Promise<void> {
    const storeInput = () => this.#store.put(`${INPUTS}${record.workspace}/${record.id}`, input);
    const storeRecord = () => putJson(this.#store, recordKey(record.workspace, record.id), record, { cas: 0 });
    let created: boolean;
    if (this.#store.ordersWrites) [, created] = await Promise.all([storeInput(), storeRecord()]);
    else created = (await storeInput()) && (await storeRecord());
    if (!created) throw new SvcError('internal', `a call ${record.id} exists already`);
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

  async putOutcome(workspace: string, id: string, frame: FinalFrame): Promise<void> {
    await putJson(this.#store, `${OUTCOMES}${workspace}/${id}`, frame);
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
