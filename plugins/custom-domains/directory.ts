/**
 * The domains as the gateway reads them on every request: an in-memory map
 * from host name to record, refreshed from the state store at most once per
 * `refreshMs` (in the background once loaded), so that every replica sees
 * claims, verifications and suspensions made elsewhere. Changes made here
 * are applied to the map at once.
 */
import type { ResolvedRoute } from 'svc/plugin';
import { statusOf, viewOf, type DomainRecord, type DomainRecords } from './records.js';

export class DomainCache {
  readonly #records: DomainRecords;
  readonly #refreshMs: number;
  #byHost = new Map<string, DomainRecord>();
  #loadedAt = -Infinity;
  #loading: Promise<void> | null = null;

  constructor(records: DomainRecords, refreshMs: number) {
    this.#records = records;
    this.#refreshMs = refreshMs;
  }

  /** What the gateway does with a request for `host`; null when no workspace claimed it. */
  resolve(host: string): ResolvedRoute | null | Promise<ResolvedRoute | null> {
    if (this.#loadedAt === -Infinity) {
      // The store does not answer yet: svc's own URLs must keep working (the API, the dashboard), so
      // the host counts as unknown for now and path routing, with its token checks, decides; retried next request.
      return this.#refresh().then(
        () => this.#lookup(host),
        () => null,
      );
    }
    if (performance.now() - this.#loadedAt > this.#refreshMs) void this.#refresh().catch(() => {}); // keep serving what we know
    // Synchronous once loaded: the gateway asks on every request whose Host is not svc's own.
    return this.#lookup(host);
  }

  #lookup(host: string): ResolvedRoute | null {
    const record = this.#byHost.get(host);
    if (record === undefined) return null;
    if (statusOf(record) !== 'verified') return { served: false, reason: viewOf(record).reason ?? 'not served' };
    return { served: true, workspace: record.workspace, app: record.app, workload: record.workload };
  }

  /** Applies a change made by this replica. */
  set(record: DomainRecord): void {
    this.#byHost.set(record.domain, record);
  }

  delete(domain: string): void {
    this.#byHost.delete(domain);
  }

  #refresh(): Promise<void> {
    this.#loading ??= this.#records
      .list()
      .then((records) => {
        this.#byHost = new Map(records.map((record) => [record.domain, record]));
        this.#loadedAt = performance.now();
      })
      .finally(() => {
        this.#loading = null;
      });
    return this.#loading;
  }
}
