import type { RouteEntry } from './types.js';
import { SvcError } from '../errors.js';

export interface RouteMatch {
  readonly entry: RouteEntry;
  /** The path after the workload prefix, as the container sees it ("/" at least). */
  readonly rest: string;
  /** What the gateway stripped from the path: `entry.prefix`, or "" for a host-based URL. */
  readonly prefix: string;
}

/** A host name a deploy asked for and did not get, because another workload holds it. */
export interface HostTaken {
  readonly entry: RouteEntry;
  readonly host: string;
  /** Unit key of the workload that holds the host. */
  readonly heldBy: string;
}

/**
 * In-memory map from workload URL to route, read on every request (no I/O).
 * A path prefix is always the first three path segments, so a path lookup is
 * one split and one Map.get; a host-based URL is one Map.get on the host name.
 */
export class RouteTable {
  readonly #byPrefix = new Map<string, RouteEntry>();
  readonly #byHost = new Map<string, RouteEntry>();

  /**
   * Throws `conflict` when a prefix belongs to another unit. A deploy calls
   * it before starting anything, then `add()`s once its containers are healthy.
   */
  assertFree(entries: readonly RouteEntry[]): void {
    for (const entry of entries) {
      const existing = this.#byPrefix.get(entry.prefix);
      if (existing && existing.unit !== entry.unit) {
        throw new SvcError('conflict', `the URL ${entry.prefix} is already used by ${existing.unit}.`, { hint: 'Rename the app or the workload.' });
      }
    }
  }

  /**
   * Adds routes; refuses (without changing anything) when a prefix belongs to
   * another unit. A host name held by another unit is not taken: the path URL
   * still works, and the caller gets the refusals to tell the user.
   */
  add(entries: readonly RouteEntry[]): HostTaken[] {
    this.assertFree(entries);
    const taken: HostTaken[] = [];
    for (const entry of entries) {
      this.#byPrefix.set(entry.prefix, entry);
      if (!entry.host) continue;
      const holder = this.#byHost.get(entry.host);
      if (holder && holder.unit !== entry.unit) taken.push({ entry, host: entry.host, heldBy: holder.unit });
      else this.#byHost.set(entry.host, entry);
    }
    return taken;
  }

  removeUnit(unit: string): void {
    for (const [prefix, entry] of this.#byPrefix) if (entry.unit === unit) this.#byPrefix.delete(prefix);
    for (const [host, entry] of this.#byHost) if (entry.unit === unit) this.#byHost.delete(host);
  }

  entries(): RouteEntry[] {
    return [...this.#byPrefix.values()];
  }

  /** The host name an entry of `unit` actually serves, if any (it may have been taken). */
  hostOf(unit: string): string | null {
    for (const [host, entry] of this.#byHost) if (entry.unit === unit) return host;
    return null;
  }

  /**
   * Finds the workload for a request: by its Host header when that names a
   * host-based URL (the whole path then goes to the container), else by the
   * path (no query string).
   */
  match(pathname: string, hostHeader?: string): RouteMatch | null {
    if (hostHeader !== undefined && this.#byHost.size > 0) {
      const entry = this.#byHost.get(hostName(hostHeader));
      if (entry) return { entry, rest: pathname.startsWith('/') ? pathname : `/${pathname}`, prefix: '' };
    }
    if (!pathname.startsWith('/')) return null;
    let end = 0;
    for (let segment = 0; segment < 3; segment++) {
      end = pathname.indexOf('/', end + 1);
      if (end === -1) {
        if (segment < 2) return null;
        end = pathname.length;
      }
    }
    const entry = this.#byPrefix.get(pathname.slice(0, end));
    if (!entry) return null;
    return { entry, rest: pathname.slice(end) || '/', prefix: entry.prefix };
  }
}

/** `Quickstart-Hello.localhost:7420` → `quickstart-hello.localhost` (DNS names are case-insensitive). */
function hostName(header: string): string {
  const colon = header.lastIndexOf(':');
  // `[::1]:80` has colons inside the brackets; a bracketed literal never names a workload anyway.
  const name = colon > header.lastIndexOf(']') ? header.slice(0, colon) : header;
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** True when the path after the prefix is the endpoint's route (a trailing slash is tolerated). */
export function routeMatches(route: string, rest: string): boolean {
  if (route === '/') return rest === '/';
  return rest === route || rest === `${route}/`;
}
