/**
 * The per-workspace quotas in force: the ones the operator set with a command (`svc workspace quota`,
 * kept in the state store under `quotas/<workspace>`), else the config's (`workspaceQuotas`, its `*`
 * entry for the others). Read synchronously by the autoscaler at each scale-up, so they are held in
 * memory: loaded at start, changed at once by this replica's sets, and read again every `refreshMs`
 * (another replica may have led when an operator changed one).
 */
import { SvcError } from '../../model/errors.js';
import { checkQuota, quotaFor, type QuotaTable, type WorkspaceQuota } from '../../model/quotas.js';
import { storedJson, storedObject } from '../../model/store/stored-fields.js';
import { putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import type { Operator } from './workspaces.js';

const PREFIX = 'quotas/';
const REFRESH_MS = 30_000;

/** Where a workspace's quota comes from. */
export type QuotaSource = 'command' | 'config' | null;

export class QuotaBook {
  readonly #store: StateStore;
  readonly #configured: QuotaTable;
  readonly #report: (error: unknown) => void;
  #set = new Map<string, WorkspaceQuota>();
  /** Moved by every set: a refresh that began before one does not bring back what it replaced. */
  #generation = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(store: StateStore, configured: QuotaTable, report: (error: unknown) => void) {
    this.#store = store;
    this.#configured = configured;
    this.#report = report;
  }

  /** Loads the quotas set by command, then keeps them fresh until stop(). */
  async start(refreshMs = REFRESH_MS): Promise<void> {
    await this.refresh();
    this.#timer ??= setInterval(() => void this.refresh().catch(this.#report), refreshMs).unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  async refresh(): Promise<void> {
    const generation = this.#generation;
    const entries = await this.#store.list(PREFIX);
    if (generation !== this.#generation) return; // a set came meanwhile: the next refresh reads it
    this.#set = new Map(entries.map((entry) => [entry.key.slice(PREFIX.length), storedJson(entry, parseStored)]));
  }

  /** The quota in force for the workspace, or null for none. */
  quotaOf(workspace: string): WorkspaceQuota | null {
    return this.#set.get(workspace) ?? quotaFor(this.#configured, workspace);
  }

  sourceOf(workspace: string): QuotaSource {
    return this.#set.has(workspace) ? 'command' : quotaFor(this.#configured, workspace) === null ? null : 'config';
  }

  /** Sets the workspace's quota (the operator only), or with null removes it: the config's holds again. */
  async set(workspace: string, raw: unknown, by: Operator): Promise<void> {
    if (!by.operator) {
      throw new SvcError(
        'not_operator',
        `only the server's operator may set the quota of workspace ${JSON.stringify(workspace)}; ${by.subject} is not the operator`,
        {
          hint: "A workspace's members read its quota with svc workspace quota; ask the server's operator to change it.",
        },
      );
    }
    this.#generation++;
    if (raw === null) {
      await this.#store.delete(`${PREFIX}${workspace}`);
      this.#set.delete(workspace);
      return;
    }
    const quota = checkQuota(raw, 'the quota');
    if ('problem' in quota) {
      throw new SvcError('bad_request', `${quota.problem}.`, {
        hint: 'Give --containers (a count), --cpu (cores), --memory (MiB) and --gpus (a count), each 0 or more; leave out what has no bound.',
      });
    }
    await putJson(this.#store, `${PREFIX}${workspace}`, quota);
    this.#set.set(workspace, quota);
  }
}

function parseStored(value: unknown, key: string): WorkspaceQuota {
  const quota = checkQuota(storedObject(value, key), key);
  if ('problem' in quota) {
    throw new SvcError('state_corrupt', `the state record ${JSON.stringify(key)} is not a quota: ${quota.problem}`, {
      hint: 'Set the quota again (svc workspace quota <workspace> ...) or remove it (--clear).',
      details: { key },
    });
  }
  return quota;
}
