/**
 * `svc domain list | verify <domain>`: the custom domains of the workspace
 * svc acts in, each with its status and the DNS TXT record to publish. A
 * deploy with `domain="…"` claims a domain; `verify` looks its record up
 * now, and a found record makes the domain served.
 */
import { API_PREFIX } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import type { Output } from '../output.js';
import { formatTable } from '../table.js';
import type { DomainView } from '../../core/model/domains/types.js';

export interface DomainFlags {
  readonly json?: boolean;
}

export async function domainList(context: CommandContext, flags: DomainFlags = {}): Promise<void> {
  const { client } = await connect(context);
  const { domains } = await client.get<{ domains: DomainView[] }>(`${API_PREFIX}/domains`);
  const { out } = context;
  if (flags.json) return out.result(JSON.stringify({ domains }, null, 2));
  if (domains.length === 0) return out.step('no custom domains: a deploy with domain="api.example.com" on a workload claims one');
  printDomains(out, domains);
}

export async function domainVerify(context: CommandContext, domain: string, flags: DomainFlags = {}): Promise<void> {
  const { client } = await connect(context);
  const view = await client.post<DomainView>(`${API_PREFIX}/domains/${encodeURIComponent(domain.trim())}/verify`, {});
  const { out } = context;
  if (flags.json) return out.result(JSON.stringify(view, null, 2));
  if (view.status === 'verified') out.done(`${view.domain} is verified: it serves ${view.app}/${view.workload}`);
  else out.warn(`${view.domain} is ${view.status}: ${view.reason ?? 'not served'}`);
  printDomains(out, [view]);
}

/** One row per domain, then the record to publish for each that is not verified yet. */
export function printDomains(out: Output, domains: readonly DomainView[]): void {
  const rows = domains.map((d) => [d.domain, statusText(out, d.status), `${d.app}/${d.workload}`]);
  for (const line of formatTable(['DOMAIN', 'STATUS', 'SERVES'], rows, out.color)) out.result(line);
  for (const d of domains.filter((d) => d.status === 'pending')) {
    out.step(`publish for ${d.domain}: ${d.record.name} ${d.record.type} "${d.record.value}", then: svc domain verify ${d.domain}`);
  }
  for (const d of domains.filter((d) => d.status === 'suspended')) out.step(`${d.domain}: ${d.reason}`);
}

function statusText(out: Output, status: DomainView['status']): string {
  return status === 'verified' ? out.color.green(status) : status === 'pending' ? out.color.yellow(status) : out.color.red(status);
}
