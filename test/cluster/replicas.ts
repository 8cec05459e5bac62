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
