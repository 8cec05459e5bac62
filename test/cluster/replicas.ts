/**
 * Two `svc server` replicas on the cluster behind one load balancer, their shared `publicUrl`, on
 * one data dir, as the operator guide asks of replicas (the bundles Nomad downloads): the first
 * leads, the second follows.
 */
import { tempDir } from '../helpers/config.js';
import { freePort } from '../helpers/free-port.js';
import { startLoadBalancer, type LoadBalancer } from '../helpers/load-balancer.js';
import type { Cluster } from './agents.js';
import { SvcServer } from './svc-process.js';

export interface Replicas {
  readonly first: SvcServer;
  readonly second: SvcServer;
  readonly balancer: LoadBalancer;
  /** Stops both replicas, then the balancer. */
  close(): Promise<void>;
}

/**
 * The replicas of a describe block: started before its tests (after the hooks registered before
 * this call) and closed after them. Its fields are read inside hooks and tests, once started.
 */
export function useReplicas(cluster: () => Promise<Cluster>): Omit<Replicas, 'close'> {
  let started: Replicas | undefined;
  before(async () => {
    started = await startReplicas(await cluster());
  });
  after(async () => started?.close());
  const get = (): Replicas => {
    if (started === undefined) throw new Error('the replicas are read before they started (outside a hook or test)');
    return started;
  };
  return {
    get first() {
      return get().first;
    },
    get second() {
      return get().second;
    },
    get balancer() {
      return get().balancer;
    },
  };
}

export async function startReplicas(cluster: Cluster): Promise<Replicas> {
  const dataDir = tempDir('svc-data-');
  const ports = [await freePort(), await freePort()];
  const balancer = await startLoadBalancer(ports);
  const env = cluster.svcEnv({ SVC_PUBLIC_URL: balancer.url });
  const first = new SvcServer(ports[0]!, dataDir, env);
  first.start();
  await first.ready('ready');
  const second = new SvcServer(ports[1]!, dataDir, env);
  second.start();
  await second.ready('following');
  return {
    first,
    second,
    balancer,
    async close() {
      await first.stop();
      await second.stop();
      await balancer.close();
    },
  };
}
