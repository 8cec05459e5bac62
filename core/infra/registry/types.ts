/**
 * The service registry: where the gateway learns which healthy containers
 * serve a deployment. The embedded registry lives in-process; the Consul
 * registry (later) watches instances that Nomad registers.
 */

/** How to reach one container: a Unix socket locally, host and port in a cluster. */
export type InstanceAddress =
  | { readonly kind: 'unix'; readonly socketPath: string }
  | { readonly kind: 'tcp'; readonly host: string; readonly port: number };

export interface Instance {
  /** Unique per container (the container id). */
  readonly id: string;
  /** The deployment unit it serves; see `deploymentKey()` in core/model/deployment-keys.ts. */
  readonly service: string;
  readonly address: InstanceAddress;
  /** Requests one instance takes at once (workers × concurrency). */
  readonly capacity: number;
  readonly meta: Readonly<Record<string, string>>;
}

/** Called with the full, current list of a service's instances whenever it changes. */
export type RegistryListener = (service: string, instances: readonly Instance[]) => void;

export interface ServiceRegistry {
  readonly name: string;
  /** Adds or replaces an instance (by id). Only healthy instances are registered. */
  register(instance: Instance): Promise<void>;
  /** Removes an instance; unknown ids are ignored (idempotent). */
  deregister(id: string): Promise<void>;
  /** The current instances of a service, from memory (no I/O: used on the request path). */
  instances(service: string): readonly Instance[];
  /** Pushes every change; returns the unsubscribe function. */
  watch(listener: RegistryListener): () => void;
  close(): Promise<void>;
}
