/**
 * Waits until a registry lists an instance of a service. A Nomad allocation
 * is healthy to svc's own probe seconds before Consul's check passes and the
 * gateway sees it: a deploy that switched its route at once would queue
 * every request for that long (and for good, should Consul go away then).
 */
import type { ServiceRegistry } from './types.js';

/** Resolves true once `service` has an instance, false after `timeoutMs` without one. */
export function untilInstances(registry: ServiceRegistry, service: string, timeoutMs: number): Promise<boolean> {
  if (registry.instances(service).length > 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (found: boolean): void => {
      clearTimeout(timer);
      unwatch();
      resolve(found);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    const unwatch = registry.watch((changed, instances) => {
      if (changed === service && instances.length > 0) done(true);
    });
    // Pushed between the first look and the watch.
    if (registry.instances(service).length > 0) done(true);
  });
}
