/**
 * The agents a server's config makes it depend on, each watched
 * (agent-watch.ts): Consul for the state, the registry and the leader lock;
 * Nomad for the workloads. None on the embedded default.
 */
import type { ServerConfig } from '../../config/schema.js';
import { NomadClient } from '../infra/scheduler/nomad/client.js';
import { ConsulClient } from '../infra/state/consul-client.js';
import { AgentWatch } from '../traffic/cluster/agent-watch.js';

export interface AgentWatches {
  readonly consul: AgentWatch | null;
  readonly nomad: AgentWatch | null;
}

export function watchAgents(config: ServerConfig, log: (text: string) => void): AgentWatches {
  const usesConsul = config.state === 'consul' || config.registry === 'consul';
  return {
    consul: usesConsul ? consulWatch(config, log) : null,
    nomad: config.scheduler === 'nomad' ? nomadWatch(config, log) : null,
  };
}

function consulWatch(config: ServerConfig, log: (text: string) => void): AgentWatch {
  // A connection of its own: the probe must not queue behind blocking queries.
  const consul = new ConsulClient({
    address: config.consulAddr,
    ...(config.consulToken === null ? {} : { token: config.consulToken }),
    maxSockets: 1,
  });
  return new AgentWatch({
    name: 'Consul',
    address: config.consulAddr,
    meanwhile:
      'the gateway serves workload traffic with the routes and instances it knew then (marked stale), and changes that need Consul fail until it answers',
    async probe(signal) {
      if ((await consul.statusLeader({ signal })) === '') throw new Error('the Consul cluster has no leader');
    },
    release: () => consul.close(),
    log,
  });
}

function nomadWatch(config: ServerConfig, log: (text: string) => void): AgentWatch {
  const nomad = new NomadClient({ url: config.nomadAddr, token: config.nomadToken ?? undefined, region: config.nomadRegion });
  return new AgentWatch({
    name: 'Nomad',
    address: config.nomadAddr,
    meanwhile: 'running containers keep serving; deploys, scaling and stops fail until it answers',
    async probe(signal) {
      const { body } = await nomad.get<string>('/v1/status/leader', {}, { signal });
      if (body === '') throw new Error('the Nomad cluster has no leader');
    },
    log,
  });
}
