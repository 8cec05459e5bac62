import assert from 'node:assert/strict';
import type { GpuState } from '../../../../core/infra/scheduler/types.js';
import { gpuWaitText } from '../../../../core/services/autoscale/gpu-wait.js';
import { gpuWaitError } from '../../../../core/services/autoscale/wait-errors.js';

const state: GpuState = {
  models: [
    { model: 'L4', free: 0, busy: 2, holders: ['c-1', 'c-2'] },
    { model: 'H100', free: 1, busy: 0, holders: [] },
  ],
  waiting: [
    { container: 'c-3', unit: 'u-big', request: 'H100 ×2', models: ['H100'] },
    { container: 'c-4', unit: 'u-any', request: 'any', models: ['L4', 'H100'] },
  ],
  held: new Map([
    ['GPU-a', 'c-1'],
    ['GPU-b', 'c-2'],
  ]),
};

describe('gpuWaitText', () => {
  it('says what the first waiting container of the unit asks, each model it may take busy and by whom, and who waits ahead', () => {
    assert.equal(gpuWaitText('u-big', state), 'waiting for a GPU (gpu H100 ×2): 0 of 1 H100 busy');
    assert.equal(
      gpuWaitText('u-any', state),
      'waiting for a GPU (gpu any): 2 of 2 L4 busy (held by containers c-1, c-2), 0 of 1 H100 busy; 1 container waits ahead of it',
    );
    assert.equal(gpuWaitText('u-other', state), null);
  });

  it('makes the 503 a starting error that says so, with Retry-After', () => {
    const error = gpuWaitError(30_000, gpuWaitText('u-any', state)!);
    assert.equal(error.code, 'starting');
    assert.match(
      error.message,
      /^this workload's container is waiting for a GPU \(gpu any\): 2 of 2 L4 busy .*; the request waited for 30 s in its queue\.$/,
    );
    assert.equal(error.headers?.['Retry-After'], '5');
  });
});
