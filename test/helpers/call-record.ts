/** A spawned call's record as the state store keeps it, queued and never run: for tests of what stores and lists calls. */
import type { CallRecord } from '../../core/services/calls/types.js';

export function queuedCallRecord(overrides: Partial<CallRecord> = {}): CallRecord {
  return {
    id: 'call-0123456789abcdef0123',
    workspace: 'default',
    app: 'demo',
    function: 'square',
    target: { kind: 'deployed', app: 'demo' },
    encoding: 'pickle',
    status: 'queued',
    attempt: 0,
    maxAttempts: 1,
    createdAt: '2026-11-29T00:00:00.000Z',
    startedAt: null,
    endedAt: null,
    error: null,
    createdBy: null,
    ...overrides,
  };
}
