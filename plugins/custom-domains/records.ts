/**
 * Domain records in the state store, one key per host name
 * (`domains/<host>`). A key is the claim itself: it is created with
 * compare-and-set on an absent key, so of two workspaces claiming a name at
 * once exactly one wins, and every later change is compare-and-set on the
 * record's modify index, so none is lost.
 */
import { randomBytes } from 'node:crypto';
import { SvcError, type DomainStatus, type DomainView, type StateStore } from 'svc/plugin';

export const PREFIX = 'domains/';
/** The TXT record's name is this label followed by the domain. */
export const CHALLENGE_LABEL = '_svc-challenge';

export interface DomainRecord {
  readonly domain: string;
  readonly workspace: string;
  readonly app: string;
  readonly workload: string;
  /** What the TXT record must hold. */
  readonly token: string;
  readonly claimedAt: string;
  readonly verifiedAt: string | null;
  /** Set while the workspace's plan does not include domains (a downgrade); cleared by an upgrade. */
  readonly suspendedAt: string | null;
}

export interface Stored {
  readonly record: DomainRecord;
  readonly modifyIndex: number;
}

export function statusOf(record: DomainRecord): DomainStatus {
  if (record.suspendedAt !== null) return 'suspended';
  return record.verifiedAt !== null ? 'verified' : 'pending';
}

export function viewOf(record: DomainRecord): DomainView {
  const status = statusOf(record);
  return {
    domain: record.domain,
    workspace: record.workspace,
    app: record.app,
    workload: record.workload,
    status,
    record: { type: 'TXT', name: `${CHALLENGE_LABEL}.${record.domain}`, value: record.token },
    claimedAt: record.claimedAt,
    verifiedAt: record.verifiedAt,
    reason:
      status === 'pending'
        ? `publish the TXT record ${CHALLENGE_LABEL}.${record.domain}, then run svc domain verify ${record.domain}`
        : status === 'suspended'
          ? "the workspace's plan does not include custom domains"
          : null,
  };
}

export function newToken(): string {
  return `svc-${randomBytes(16).toString('hex')}`;
}

export class DomainRecords {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  async get(domain: string): Promise<Stored | null> {
    const entry = await this.#store.get(PREFIX + domain);
    return entry === null ? null : { record: parse(entry.value, entry.key), modifyIndex: entry.modifyIndex };
  }

  async list(): Promise<DomainRecord[]> {
    return (await this.#store.list(PREFIX)).map((entry) => parse(entry.value, entry.key));
  }

  /** Writes `record` only when the key is absent (`cas` 0) or still at `modifyIndex`; false when another write came first. */
  put(record: DomainRecord, modifyIndex: number): Promise<boolean> {
    return this.#store.put(PREFIX + record.domain, JSON.stringify(record), { cas: modifyIndex });
  }

  /** Removes the claim only if nobody changed it since `modifyIndex`. */
  release(domain: string, modifyIndex: number): Promise<boolean> {
    return this.#store.delete(PREFIX + domain, { cas: modifyIndex });
  }

  /** Read-modify-write, retried until it applies; `change` returning null leaves the record alone. */
  async update(domain: string, change: (record: DomainRecord) => DomainRecord | null): Promise<DomainRecord | null> {
    for (;;) {
      const stored = await this.get(domain);
      if (stored === null) return null;
      const changed = change(stored.record);
      if (changed === null) return stored.record;
      if (await this.put(changed, stored.modifyIndex)) return changed;
    }
  }
}

function parse(value: Buffer, key: string): DomainRecord {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(value.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw corrupt(key);
  }
  const text = (field: string): string => {
    const v = record[field];
    if (typeof v !== 'string') throw corrupt(key, field);
    return v;
  };
  const optional = (field: string): string | null => {
    const v = record[field] ?? null;
    if (v !== null && typeof v !== 'string') throw corrupt(key, field);
    return v;
  };
  return {
    domain: text('domain'),
    workspace: text('workspace'),
    app: text('app'),
    workload: text('workload'),
    token: text('token'),
    claimedAt: text('claimedAt'),
    verifiedAt: optional('verifiedAt'),
    suspendedAt: optional('suspendedAt'),
  };
}

function corrupt(key: string, field?: string): SvcError {
  return new SvcError(
    'state_corrupt',
    `the state record ${JSON.stringify(key)} is not a domain record${field === undefined ? '' : ` (field ${field})`}`,
    { details: { key } },
  );
}
