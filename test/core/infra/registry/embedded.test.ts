import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import { describeRegistryConformance } from './conformance.js';

describeRegistryConformance('embedded registry', async () => ({
  registry: createEmbeddedRegistry(),
  instance: (id, service = 'ws/app/preview/w', port = 0) => ({
    id,
    service,
    address: { kind: 'unix', socketPath: `/tmp/${id}-${port}.sock` },
    capacity: 1,
    meta: {},
  }),
}));
