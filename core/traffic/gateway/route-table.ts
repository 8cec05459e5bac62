import type { RouteEntry } from './types.js';
import { SvcError } from '../../model/errors.js';

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
 * A route copied from the leader's table (core/traffic/cluster/route-sync.ts), with
 * whether the leader serves its host name: a host the leader gave to another
 * unit must not be served here either.
 */
export interface FollowedRoute {
  readonly entry: RouteEntry;
  readonly servesHost: boolean;
}

/**
 * In-memory map from workload URL to route, read on every request (no I/O).
 * A path prefix is always the first three path segments, so a path lookup is
 * one split and one Map.get; a host-based URL is one Map.get on the host name.
 *
 * It holds two kinds of entries in the same maps: its own (`add()`, from this
 * replica's deployments) and followed ones (`follow()`, copied from the
 * leader). Own entries win: a followed entry never takes a prefix or host an
 * own one holds, and `add()` evicts a followed entry in its way, so that a
 * follower that becomes leader keeps serving the old leader's routes until
 * it has restored its own. Only writes look at which kind an entry is.
 */
export class RouteTable {
  readonly #byPrefix = new Map<string, RouteEntry>();
  readonly #byHost = new Map<string, RouteEntry>();
  /** The followed entries in the maps (each holds its prefix, and maybe its host). */
  readonly #followed = new Set<RouteEntry>();
  readonly #listeners = new Set<() => void>();

  /**
   * Throws `conflict` when a prefix belongs to another unit of this replica
   * (a followed entry does not count: `add()` evicts it). A deploy calls it
   * before starting anything, then `add()`s once its containers are healthy.
   */
  assertFree(entries: readonly RouteEntry[]): void {
    for (const entry of entries) {
      const existing = this.#byPrefix.get(entry.prefix);
      if (existing && existing.unit !== entry.unit && !this.#followed.has(existing)) {
        throw new SvcError('conflict', `the URL ${entry.prefix} is already used by ${existing.unit}.`, {
          hint: 'Rename the app or the workload.',
        });
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
      const previous = this.#byPrefix.get(entry.prefix);
      if (previous && this.#followed.has(previous)) this.#unfollow(previous);
      this.#byPrefix.set(entry.prefix, entry);
      if (!entry.host) continue;
      let holder = this.#byHost.get(entry.host);
      if (holder && this.#followed.has(holder)) {
        this.#unfollow(holder);
        holder = undefined;
      }
      if (holder && holder.unit !== entry.unit) taken.push({ entry, host: entry.host, heldBy: holder.unit });
      else this.#byHost.set(entry.host, entry);
    }
    if (entries.length > 0) this.#changed();
    return taken;
  }

  /** Removes every own route of `unit` (followed ones change only through `follow()`). */
  removeUnit(unit: string): void {
    let removed = false;
    for (const [prefix, entry] of this.#byPrefix) {
      if (entry.unit === unit && !this.#followed.has(entry)) {
        this.#byPrefix.delete(prefix);
        removed = true;
      }
    }
    for (const [host, entry] of this.#byHost) if (entry.unit === unit && !this.#followed.has(entry)) this.#byHost.delete(host);
    if (removed) this.#changed();
  }

  /**
   * Replaces every followed entry with `routes`, in one synchronous step so
   * that no request sees a half-replaced table. A route whose prefix an own
   * entry holds, or whose served host an own entry holds, is skipped whole.
   */
  follow(routes: readonly FollowedRoute[]): void {
    this.dropFollowed();
    for (const { entry, servesHost } of routes) {
      if (this.#byPrefix.has(entry.prefix)) continue; // an own entry (or a duplicate) holds it
      const host = servesHost && entry.host ? entry.host : null;
      const holder = host === null ? undefined : this.#byHost.get(host);
      if (holder && !this.#followed.has(holder)) continue;
      this.#followed.add(entry);
      this.#byPrefix.set(entry.prefix, entry);
      if (host !== null && !holder) this.#byHost.set(host, entry);
    }
  }

  /** Removes every followed entry; own entries stay. */
  dropFollowed(): void {
    for (const entry of this.#followed) this.#unfollow(entry);
  }

  /** The own entries, each with whether it serves its host name: what a leader publishes. */
  published(): FollowedRoute[] {
    const routes: FollowedRoute[] = [];
    for (const entry of this.#byPrefix.values()) {
      if (this.#followed.has(entry)) continue;
      routes.push({ entry, servesHost: !!entry.host && this.#byHost.get(entry.host) === entry });
    }
    return routes;
  }

  /**
   * Calls `listener` synchronously after `add()` or `removeUnit()` changed
   * the own entries (never for `follow()`/`dropFollowed()`). Returns the unsubscribe.
   */
  onChange(listener: () => void): () => void {
    const subscription = () => listener(); // its own identity: subscribing one function twice needs two unsubscribes
    this.#listeners.add(subscription);
    return () => {
      this.#listeners.delete(subscription);
    };
  }

  /** The entry at a workload prefix (`/default/shop/api`), own or followed. */
  at(prefix: string): RouteEntry | undefined {
    return this.#byPrefix.get(prefix);
  }

  entries(): RouteEntry[] {
    return [...this.#byPrefix.values()];
  }

  /** The host name an entry of `unit` actually serves, if any (it may have been taken); an own entry's first. */
  hostOf(unit: string): string | null {
    let followed: string | null = null;
    for (const [host, entry] of this.#byHost) {
      if (entry.unit !== unit) continue;
      if (!this.#followed.has(entry)) return host;
      followed ??= host;
    }
    return followed;
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

  #unfollow(entry: RouteEntry): void {
    if (this.#byPrefix.get(entry.prefix) === entry) this.#byPrefix.delete(entry.prefix);
    if (entry.host && this.#byHost.get(entry.host) === entry) this.#byHost.delete(entry.host);
    this.#followed.delete(entry);
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}

/** `Quickstart-Hello.localhost:7420` → `quickstart-hello.localhost` (DNS names are case-insensitive). */
export function hostName(header: string): string {
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
