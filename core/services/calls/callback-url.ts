/**
 * Where a completion callback may go. A URL is checked when its call is spawned (its form, then
 * every address its host resolves to) and again before each delivery, which then connects only to
 * the addresses it checked: DNS can change between the spawn and a delivery an hour later, and
 * between a check and a connection. Unless the operator allows it (`callbackAllowPrivate`), an
 * address that is loopback, private (RFC 1918), carrier-grade NAT, link-local (cloud metadata
 * services), unique-local, unspecified, or svc's own is refused: otherwise anyone who may spawn a
 * call could make svc send requests inside its network (server-side request forgery).
 * node:net's BlockList classifies the addresses (IPv4-mapped IPv6 addresses included), so that
 * no dependency is needed for a dozen ranges.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import os from 'node:os';
import { callbackUrlProblem } from '../../model/callback-url.js';
import { SvcError } from '../../model/errors.js';

/** An address the delivery may connect to. */
export interface CheckedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Where the URL came from, for the errors: a JSON field (`callbackUrl`), a header (`X-Svc-Callback-Url`), or words (`the callback_url option of function square`). */
export type Source = string;

function labelOf(source: Source): string {
  if (/^X-[A-Za-z-]+$/i.test(source)) return `the header ${source}`;
  return /^[A-Za-z]+$/.test(source) ? `the field "${source}"` : source;
}

const REFUSED_RANGES: readonly (readonly [kind: string, network: string, prefix: number, family: 'ipv4' | 'ipv6'])[] = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['carrier-grade NAT', '100.64.0.0', 10, 'ipv4'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['unique-local', 'fc00::', 7, 'ipv6'],
  ['link-local', 'fe80::', 10, 'ipv6'],
];

const RANGES: readonly (readonly [kind: string, list: BlockList])[] = (() => {
  const byKind = new Map<string, BlockList>();
  for (const [kind, network, prefix, family] of REFUSED_RANGES) {
    if (!byKind.has(kind)) byKind.set(kind, new BlockList());
    byKind.get(kind)!.addSubnet(network, prefix, family);
  }
  return [...byKind];
})();

export interface CallbackGuardOptions {
  /** `callbackAllowPrivate`: any address goes. */
  readonly allowPrivate: boolean;
  /** Hosts that name svc itself (its public URL's, its listener's): their addresses are refused too. */
  readonly ownHosts?: readonly string[];
  /** Resolves a host to all its addresses (node:dns/promises lookup; tests may give another). */
  readonly resolve?: (host: string) => Promise<CheckedAddress[]>;
}

export class CallbackGuard {
  readonly #allowPrivate: boolean;
  readonly #ownHosts: readonly string[];
  readonly #resolve: (host: string) => Promise<CheckedAddress[]>;

  constructor(options: CallbackGuardOptions) {
    this.#allowPrivate = options.allowPrivate;
    this.#ownHosts = options.ownHosts ?? [];
    this.#resolve = options.resolve ?? resolveAll;
  }

  /** The URL, checked as a spawn checks it: its form, then where it points; `bad_request` saying why otherwise. */
  async check(raw: unknown, source: Source): Promise<string> {
    const url = callbackUrlOf(raw, source);
    await this.addresses(url, source);
    return url.href;
  }

  /** Every address the URL's host resolves to, all allowed (a delivery connects only to these). */
  async addresses(url: URL, source: Source): Promise<CheckedAddress[]> {
    const host = hostOf(url);
    let found: CheckedAddress[];
    try {
      found = await this.#resolve(host);
    } catch (error) {
      throw refused(source, `its host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    if (found.length === 0) throw refused(source, `its host ${host} resolves to no address`);
    if (this.#allowPrivate) return found;
    const own = await this.#ownAddresses();
    for (const { address, family } of found) {
      const kind = kindOf(address, family) ?? (own.has(address) ? "svc's own address" : null);
      if (kind !== null) throw forgery(source, host, address, kind);
    }
    return found;
  }

  /** The addresses of this machine's interfaces and of the hosts that name svc. */
  async #ownAddresses(): Promise<Set<string>> {
    const own = new Set<string>();
    for (const list of Object.values(os.networkInterfaces())) for (const { address } of list ?? []) own.add(address.replace(/%.*$/, ''));
    for (const host of this.#ownHosts) {
      for (const { address } of await this.#resolve(host).catch(() => [])) own.add(address);
    }
    return own;
  }
}

/** The URL's form (core/model/callback-url.ts): a string, an absolute http(s) URL with a host and no credentials. */
export function callbackUrlOf(raw: unknown, source: Source): URL {
  if (typeof raw !== 'string')
    throw refused(source, `it must be a string (an http or https URL of your receiver), got ${JSON.stringify(raw)}`);
  const problem = callbackUrlProblem(raw);
  if (problem !== null) throw refused(source, problem);
  return new URL(raw);
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function kindOf(address: string, family: 4 | 6): string | null {
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return RANGES.find(([, list]) => list.check(address, type))?.[0] ?? null;
}

async function resolveAll(host: string): Promise<CheckedAddress[]> {
  if (isIP(host) !== 0) return [{ address: host, family: isIP(host) as 4 | 6 }];
  return (await lookup(host, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family as 4 | 6 }));
}

function refused(source: Source, why: string): SvcError {
  return new SvcError('bad_request', `${labelOf(source)} is not a callback URL svc can use: ${why}.`, {
    hint: 'Give the http or https URL where your receiver takes POSTs, such as https://example.com/hooks/svc (docs/api.md#completion-callbacks).',
    details: { field: source },
  });
}

function forgery(source: Source, host: string, address: string, kind: string): SvcError {
  return new SvcError(
    'bad_request',
    `${labelOf(source)} is refused: its host ${host} resolves to ${address} (${kind}). svc does not send callbacks to loopback, private, link-local or unique-local addresses, nor to itself, so that a callback cannot reach inside svc's network (server-side request forgery).`,
    {
      hint: 'Give a public address of your receiver. An operator whose receivers are on a private network allows them with callbackAllowPrivate (SVC_CALLBACK_ALLOW_PRIVATE=true).',
      details: { field: source, address, range: kind },
    },
  );
}
