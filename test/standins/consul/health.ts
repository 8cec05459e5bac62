/**
 * `/v1/health/service/<name>` and `/v1/catalog/services` of the Consul
 * stand-in, after agent/health_endpoint.go and agent/consul/state/catalog.go:
 * the index is the service's own (`service.<name>`; its last extinction once
 * no instance is left), `?passing` (ParseBool; 400 `Invalid value for
 * ?passing`) drops entries with any non-passing check and is applied after
 * the blocking wait, every `?tag=` must match, empty results are `[]` and
 * `Tags` is never null.
 */
import { agentCheck } from './agent.js';
import { parseGoBool } from './go.js';
import { blockingQuery, HttpError, sendJson, setMeta, type Call } from './http.js';
import { DATACENTER, NODE_ADDRESS, NODE_NAME, type ConsulState, type Service } from './state.js';

export function handleHealthService(call: Call, state: ConsulState, jitter: boolean): void {
  if (call.method !== 'GET') throw new HttpError(405, `method ${call.method} not allowed`);
  const name = call.path.slice('/v1/health/service/'.length);
  if (name === '') throw new HttpError(400, 'Missing service name');
  let passing = false;
  if (call.query.has('passing')) {
    const raw = call.query.get('passing') ?? '';
    try {
      passing = raw === '' || parseGoBool(raw);
    } catch {
      throw new HttpError(400, 'Invalid value for ?passing');
    }
  }
  const tags = call.query.getAll('tag');
  // A blocking read is served by the streaming backend (agent/rpcclient/health/health.go), whose answers carry only the
  // index: Consul 1.21.4 answered X-Consul-KnownLeader: false there.
  const streaming = call.query.has('index') && call.query.get('index') !== '0';
  blockingQuery(
    call,
    state,
    jitter,
    () => ({ index: state.serviceIndex(name), result: null }),
    (index) => {
      const node = {
        ID: state.nodeId,
        Node: NODE_NAME,
        Address: NODE_ADDRESS,
        Datacenter: DATACENTER,
        TaggedAddresses: { lan: NODE_ADDRESS, lan_ipv4: NODE_ADDRESS, wan: NODE_ADDRESS, wan_ipv4: NODE_ADDRESS },
        Meta: { 'consul-network-segment': '', 'consul-version': '1.21.4' },
        CreateIndex: state.nodeCreateIndex,
        ModifyIndex: state.nodeCreateIndex,
      };
      const nodeChecks = [...state.checks.values()].filter((c) => c.ServiceID === '');
      const entries = [...state.services.values()]
        .filter((s) => s.Service === name && tags.every((tag) => s.Tags.includes(tag)))
        .sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0))
        .map((service) => ({
          Node: node,
          Service: nodeService(service),
          Checks: [...nodeChecks, ...[...state.checks.values()].filter((c) => c.ServiceID === service.ID)].map(agentCheck),
        }))
        .filter((entry) => !passing || entry.Checks.every((c) => c.Status === 'passing'));
      setMeta(call.res, index);
      if (streaming) {
        call.res.setHeader('X-Consul-KnownLeader', 'false');
        call.res.setHeader('X-Consul-Query-Backend', 'streaming');
      }
      sendJson(call.res, entries);
    },
  );
}

/**
 * structs.NodeService as Consul 1.21.4 answered it: Kind, SocketPath, TaggedAddresses and Port left out when empty
 * (`json:",omitempty"`), the IPv4 tagged addresses the agent adds at registration (agent/agent.go addServiceInternal),
 * the empty Proxy and Connect blocks.
 */
function nodeService(service: Service): Record<string, unknown> {
  const ipv4 = /^\d+\.\d+\.\d+\.\d+$/.test(service.Address);
  const tagged = ipv4
    ? { lan_ipv4: { Address: service.Address, Port: service.Port }, wan_ipv4: { Address: service.Address, Port: service.Port } }
    : null;
  return {
    ID: service.ID,
    Service: service.Service,
    Tags: [...service.Tags],
    Address: service.Address,
    ...(tagged === null ? {} : { TaggedAddresses: tagged }),
    Meta: service.Meta,
    ...(service.Port === 0 ? {} : { Port: service.Port }),
    Weights: service.Weights,
    EnableTagOverride: service.EnableTagOverride,
    Proxy: { Mode: '', MeshGateway: {}, Expose: {} },
    Connect: {},
    PeerName: '',
    CreateIndex: service.CreateIndex,
    ModifyIndex: service.ModifyIndex,
  };
}

export function handleCatalogServices(call: Call, state: ConsulState, jitter: boolean): void {
  if (call.method !== 'GET') throw new HttpError(405, `method ${call.method} not allowed`);
  blockingQuery(
    call,
    state,
    jitter,
    () => ({ index: state.table('services'), result: null }),
    (index) => {
      const out: Record<string, string[]> = { consul: [] };
      for (const service of state.services.values()) {
        const tags = out[service.Service] ?? (out[service.Service] = []);
        for (const tag of service.Tags) if (!tags.includes(tag)) tags.push(tag);
      }
      setMeta(call.res, index);
      sendJson(call.res, out);
    },
  );
}
