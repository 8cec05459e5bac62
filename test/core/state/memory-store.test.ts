import { createMemoryStateStore } from '../../../core/state/memory-store.js';
import { describeStateStoreConformance } from './conformance.js';

describeStateStoreConformance('memory store', async () => createMemoryStateStore());
