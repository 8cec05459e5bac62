/**
 * Looks up a domain's challenge TXT record with Node's resolver, pointed at
 * the configured server (`dnsResolver`, host:port) or the system's.
 */
import { promises as dns } from 'node:dns';
import { CHALLENGE_LABEL } from './records.js';

/** What the lookup found: the record's values, or why there are none. */
export type TxtLookup = { readonly values: string[] } | { readonly problem: string };

export function createTxtLookup(server: string | null): (domain: string) => Promise<TxtLookup> {
  return async (domain) => {
    // One resolver per lookup: short-lived, and a changed server list never leaks between lookups.
    const resolver = new dns.Resolver({ timeout: 3000, tries: 2 });
    if (server !== null) resolver.setServers([server]);
    const name = `${CHALLENGE_LABEL}.${domain}`;
    try {
      // A TXT record may be split into chunks of 255 bytes: join each record's chunks.
      return { values: (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')) };
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') return { problem: `no TXT record ${name} was found` };
      return { problem: `the DNS lookup of ${name} failed (${code ?? String(error)}${server === null ? '' : ` at ${server}`})` };
    }
  };
}
