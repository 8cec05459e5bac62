/**
 * What the control plane (API, CLI, dashboard) reads of custom domains. The
 * built-in plugin `svc:custom-domains` implements it and hands it over
 * through its `provide` option (core/platform/builtin-plugins.ts), so core never
 * imports plugins/.
 */

/** `pending`: claimed, its TXT record not seen yet; `verified`: served; `suspended`: verified, but the plan no longer includes domains. */
export type DomainStatus = 'pending' | 'verified' | 'suspended';

export interface DomainView {
  /** Lower case, no trailing dot. */
  readonly domain: string;
  readonly workspace: string;
  /** The deployed workload it serves once verified. */
  readonly app: string;
  readonly workload: string;
  readonly status: DomainStatus;
  /** The DNS record to publish: `TXT _svc-challenge.<domain> "<token>"`. */
  readonly record: { readonly type: 'TXT'; readonly name: string; readonly value: string };
  /** ISO 8601. */
  readonly claimedAt: string;
  readonly verifiedAt: string | null;
  /** Why it is not served, when it is not. */
  readonly reason: string | null;
}

export interface DomainDirectory {
  /** The workspace's domains, by name. */
  list(workspace: string): Promise<DomainView[]>;
  /** Looks the TXT record up now; a found record makes the domain `verified`. `not_found` for a domain the workspace has not claimed. */
  verify(workspace: string, domain: string): Promise<DomainView>;
}
