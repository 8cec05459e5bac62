/**
 * The URL a replica advertises to the others (in the leader lock's value:
 * followers forward the API there) when `advertiseUrl` is not set. A
 * replica listening on a wildcard address (`--host 0.0.0.0`, `::`) is
 * reached through one of this machine's addresses, not 127.0.0.1, which on
 * another machine names that machine.
 */
import type { AddressInfo } from 'node:net';
import os from 'node:os';

type Interfaces = ReturnType<typeof os.networkInterfaces>;

export function defaultAdvertiseUrl(address: AddressInfo, interfaces: Interfaces = os.networkInterfaces(), secure = false): string {
  const scheme = secure ? 'https' : 'http';
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  if (!wildcard) return `${scheme}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const external = Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .find((entry) => entry.family === 'IPv4' && !entry.internal);
  return `${scheme}://${external?.address ?? '127.0.0.1'}:${address.port}`;
}
