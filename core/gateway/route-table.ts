import type { RouteEntry } from './types.js';
import { SvcError } from '../errors.js';

export interface RouteMatch {
  readonly entry: RouteEntry;
  /** The path after the workload prefix, as the container sees it ("/" at least). */
  readonly rest: string;
}

/**
 * In-memory map from workload URL prefix to route. A prefix is always the
 * first three path segments, so a lookup is one split and one Map.get.
 */
export class RouteTable {
  readonly #byPrefix = new Map<string, RouteEntry>();

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

  /** Adds routes; refuses (without changing anything) when a prefix belongs to another unit. */
  add(entries: readonly RouteEntry[]): void {
    this.assertFree(entries);
    for (const entry of entries) this.#byPrefix.set(entry.prefix, entry);
  }

  removeUnit(unit: string): void {
    for (const [prefix, entry] of this.#byPrefix) if (entry.unit === unit) this.#byPrefix.delete(prefix);
  }

  entries(): RouteEntry[] {
    return [...this.#byPrefix.values()];
  }

  /** Finds the workload for a request path (no query string). */
  match(pathname: string): RouteMatch | null {
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
    return { entry, rest: pathname.slice(end) || '/' };
  }
}

/** True when the path after the prefix is the endpoint's route (a trailing slash is tolerated). */
export function routeMatches(route: string, rest: string): boolean {
  if (route === '/') return rest === '/';
  return rest === route || rest === `${route}/`;
}
