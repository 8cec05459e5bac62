import type { Instance, RegistryListener, ServiceRegistry } from './types.js';

/** The in-process registry of the embedded platform: a map, with changes pushed to watchers. */
export function createEmbeddedRegistry(): ServiceRegistry {
  const byService = new Map<string, Map<string, Instance>>();
  const serviceOf = new Map<string, string>();
  const listeners = new Set<RegistryListener>();
  const empty: readonly Instance[] = Object.freeze([]);
  /** Each service's list as of its last change: read on every gateway request, made once per change. */
  const snapshots = new Map<string, readonly Instance[]>();

  function snapshot(service: string): readonly Instance[] {
    return snapshots.get(service) ?? empty;
  }

  function publish(service: string): void {
    const entries = byService.get(service);
    if (entries) snapshots.set(service, Object.freeze([...entries.values()]));
    else snapshots.delete(service);
    const current = snapshot(service);
    for (const listener of listeners) listener(service, current);
  }

  function remove(id: string): string | undefined {
    const service = serviceOf.get(id);
    if (service === undefined) return undefined;
    serviceOf.delete(id);
    const entries = byService.get(service);
    entries?.delete(id);
    if (entries && entries.size === 0) byService.delete(service);
    return service;
  }

  return {
    name: 'embedded',
    async register(instance) {
      const previous = remove(instance.id);
      if (previous !== undefined && previous !== instance.service) publish(previous);
      let entries = byService.get(instance.service);
      if (!entries) byService.set(instance.service, (entries = new Map()));
      entries.set(instance.id, Object.freeze({ ...instance }));
      serviceOf.set(instance.id, instance.service);
      publish(instance.service);
    },
    async deregister(id) {
      const service = remove(id);
      if (service !== undefined) publish(service);
    },
    instances: snapshot,
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      listeners.clear();
      byService.clear();
      serviceOf.clear();
      snapshots.clear();
    },
  };
}
