import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { describeStateStoreConformance } from './conformance.js';

describeStateStoreConformance('memory store', async () => createMemoryStateStore());
