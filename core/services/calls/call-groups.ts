/**
 * Call groups (`f.spawn_map(...)`, `POST /api/v1/call-groups`): many inputs of one function, sent
 * in batches, each recorded as a call of its own before the batch is answered, so that the group
 * outlives its caller as a spawned call does (run at least once, retried, cancelled, kept for the
 * result retention). A batch first reserves its indexes on the group's record (compare-and-set),
 * then records its inputs: two batches at once never share an index. A group of another workspace
 * is `not_found`, in the same words as one that never was.
 */
import { randomBytes } from 'node:crypto';
import { isSvcError, SvcError } from '../../model/errors.js';
import type { Principal } from '../../model/principal.js';
import { MAX_VALUE_BYTES } from '../../model/store/types.js';
import type { AppSpec } from '../../model/workload/types.js';
import { functionOf } from '../runs/runs.js';
import { type CallService, DEFAULT_CALL_RESULT_TTL_SECONDS, maxAttemptsOf } from './calls.js';
import { type GroupRecords, memberId } from './group-records.js';
import {
  CALL_STATUSES,
  type CallGroupRecord,
  type CallGroupStatus,
  type CallGroupSummary,
  type CallGroupView,
  type CallStatus,
  type CallTarget,
  type CallView,
  ENDED,
} from './types.js';

/** The most inputs one group takes: each is a record in the state store (use `.map` for more). */
export const MAX_GROUP_INPUTS = 100_000;
/** The most inputs one batch (one request) brings. */
export const MAX_BATCH_INPUTS = 1000;
/** Inputs recorded at once while a batch is written (the embedded store syncs them together). */
const WRITES_AT_ONCE = 32;

export interface GroupRequest {
  readonly workspace: string;
  readonly principal: Principal | null;
  readonly spec: AppSpec;
  readonly function: string;
  readonly target: CallTarget;
}

/** A batch recorded: the group as it is now, and the ids of the batch's inputs in their order. */
export interface Recorded {
  readonly group: CallGroupSummary;
  readonly calls: readonly string[];
}

export interface CallGroupsOptions {
  readonly groups: GroupRecords;
  readonly calls: Pick<CallService, 'spawnMember' | 'ofGroup' | 'find' | 'cancel'>;
  /** How long outcomes are kept (`callResultTtlSeconds`): an empty group is kept twice as long, as a call's record is. */
  readonly resultTtlSeconds?: number;
  readonly now?: () => Date;
}

export class CallGroups {
  readonly #options: CallGroupsOptions;
  readonly #now: () => Date;

  constructor(options: CallGroupsOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** A new group with its first batch (possibly none); `more` keeps it open for further batches. */
  async create(request: GroupRequest, inputs: readonly Buffer[], more: boolean): Promise<Recorded> {
    const workload = functionOf(request.spec, request.function);
    const group: CallGroupRecord = {
      id: `group-${randomBytes(10).toString('hex')}`,
      workspace: request.workspace,
      app: request.spec.name,
      function: request.function,
      target: request.target,
      maxAttempts: maxAttemptsOf(workload),
      inputs: 0,
      closed: false,
      createdAt: this.#now().toISOString(),
      createdBy: request.principal?.tokenId ?? request.principal?.subject ?? null,
    };
    checkBatch(group, inputs);
    await this.#options.groups.create(group);
    return this.add(request.workspace, group.id, inputs, more);
  }

  /** Records a batch at the end of an open group; `conflict` once the group was closed. */
  async add(workspace: string, id: string, inputs: readonly Buffer[], more: boolean): Promise<Recorded> {
    const { group, first } = await this.#reserve(workspace, id, inputs, more);
    const ids: string[] = [];
    for (let start = 0; start < inputs.length; start += WRITES_AT_ONCE) {
      const slice = inputs.slice(start, start + WRITES_AT_ONCE);
      await Promise.all(slice.map((input, i) => this.#options.calls.spawnMember(group, first + start + i, input)));
    }
    for (let i = 0; i < inputs.length; i++) ids.push(memberId(group.id, first + i));
    return { group: summaryOf(group), calls: ids };
  }

  async get(workspace: string, id: string): Promise<CallGroupView> {
    return this.#view(await this.#record(workspace, id));
  }

  /**
   * Its inputs' calls from index `from`, at most `limit`, in index order: each read by the id its
   * index gives (not a listing of the workspace's calls). An input whose record a failed batch
   * never wrote is left out.
   */
  async members(workspace: string, id: string, from: number, limit: number): Promise<CallView[]> {
    const group = await this.#record(workspace, id);
    const indexes = Array.from({ length: Math.max(0, Math.min(limit, group.inputs - from)) }, (_, i) => from + i);
    const calls = await Promise.all(indexes.map((index) => this.#options.calls.find(workspace, memberId(id, index))));
    return calls.filter((call): call is CallView => call !== null);
  }

  /** Closes the group and cancels every input that has not ended; how many it cancelled. */
  async cancel(workspace: string, id: string): Promise<number> {
    await this.#close(workspace, id);
    let cancelled = 0;
    for (const call of await this.#options.calls.ofGroup(workspace, id)) {
      if (ENDED.has(call.status)) continue;
      try {
        await this.#options.calls.cancel(workspace, call.id);
        cancelled++;
      } catch (error) {
        if (!(isSvcError(error) && error.code === 'conflict')) throw error; // it ended meanwhile
      }
    }
    return cancelled;
  }

  /**
   * Removes the records of groups none of whose inputs is kept any more (the calls' own sweep
   * removes those); a group that never had an input, after as long as a call's record is kept.
   */
  async sweep(): Promise<void> {
    for (const group of await this.#options.groups.all()) {
      const age = this.#now().getTime() - Date.parse(group.createdAt);
      if (age < 60_000) continue; // its first batch may still be on its way
      if (group.inputs === 0 && age < 2 * (this.#options.resultTtlSeconds ?? DEFAULT_CALL_RESULT_TTL_SECONDS) * 1000) continue;
      if ((await this.#options.calls.ofGroup(group.workspace, group.id)).length === 0) {
        await this.#options.groups.remove(group.workspace, group.id);
      }
    }
  }

  /** Reserves the batch's indexes on the group's record: its first index, and the record as changed. */
  async #reserve(workspace: string, id: string, inputs: readonly Buffer[], more: boolean) {
    for (;;) {
      const entry = await this.#options.groups.get(workspace, id);
      if (entry === null) throw noGroup(id);
      if (entry.value.closed) {
        throw new SvcError('conflict', `the call group ${id} is closed: its last batch came (it has ${entry.value.inputs} inputs).`, {
          hint: 'Send every batch but the last with "more": true; spawn another group for further inputs.',
        });
      }
      checkBatch(entry.value, inputs);
      const group: CallGroupRecord = { ...entry.value, inputs: entry.value.inputs + inputs.length, closed: !more };
      if (await this.#options.groups.update(group, entry.modifyIndex)) return { group, first: entry.value.inputs };
    }
  }

  async #close(workspace: string, id: string): Promise<void> {
    for (;;) {
      const entry = await this.#options.groups.get(workspace, id);
      if (entry === null) throw noGroup(id);
      if (entry.value.closed || (await this.#options.groups.update({ ...entry.value, closed: true }, entry.modifyIndex))) return;
    }
  }

  async #record(workspace: string, id: string): Promise<CallGroupRecord> {
    const entry = await this.#options.groups.get(workspace, id);
    if (entry === null) throw noGroup(id);
    return entry.value;
  }

  async #view(group: CallGroupRecord): Promise<CallGroupView> {
    const counts = Object.fromEntries(CALL_STATUSES.map((status) => [status, 0])) as Record<CallStatus, number>;
    for (const call of await this.#options.calls.ofGroup(group.workspace, group.id)) counts[call.status]++;
    return { ...summaryOf(group), status: groupStatus(group, counts), counts };
  }
}

function summaryOf(group: CallGroupRecord): CallGroupSummary {
  const { id, app, function: fn, inputs, closed, createdAt } = group;
  return { id, app, function: fn, inputs, closed, createdAt };
}

function groupStatus(group: CallGroupRecord, counts: Record<CallStatus, number>): CallGroupStatus {
  if (!group.closed || counts.queued > 0 || counts.running > 0) return 'running';
  if (counts.failed > 0) return 'failed';
  if (counts.cancelled > 0) return 'cancelled';
  if (counts.expired > 0 && counts.succeeded === 0) return 'expired';
  return 'succeeded';
}

/** `bad_request` for a batch over MAX_BATCH_INPUTS; `payload_too_large` for an input the store cannot keep, or a batch that would take the group past MAX_GROUP_INPUTS. */
function checkBatch(group: CallGroupRecord, inputs: readonly Buffer[]): void {
  if (inputs.length > MAX_BATCH_INPUTS) {
    throw new SvcError('bad_request', `a batch of ${inputs.length} inputs; one request brings at most ${MAX_BATCH_INPUTS}.`, {
      hint: 'Send the inputs in several batches (POST …/call-groups/<id>/inputs with "more": true until the last).',
    });
  }
  // Before any index is reserved: a batch is recorded whole or not at all.
  const large = inputs.findIndex((input) => input.length > MAX_VALUE_BYTES);
  if (large >= 0) {
    throw new SvcError(
      'payload_too_large',
      `input ${group.inputs + large} is ${inputs[large]!.length} bytes pickled; a spawned call takes at most ${MAX_VALUE_BYTES} bytes (512 KiB).`,
      { hint: 'Pass a name or a URL of large data (a file the function can read) rather than the data itself.' },
    );
  }
  if (group.inputs + inputs.length > MAX_GROUP_INPUTS) {
    throw new SvcError(
      'payload_too_large',
      `the call group ${group.id} would have ${group.inputs + inputs.length} inputs; a group takes at most ${MAX_GROUP_INPUTS} (each is a call kept in the state store).`,
      { hint: 'Use f.map(...) for more inputs (they are streamed, not kept), or spawn several groups.' },
    );
  }
}

export function noGroup(id: string): SvcError {
  return new SvcError('not_found', `there is no call group ${id} in this workspace.`, {
    hint: 'Group ids come from spawn_map() (FunctionCall.object_id) or POST /api/v1/call-groups.',
  });
}
