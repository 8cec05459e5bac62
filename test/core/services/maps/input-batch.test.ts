/** A batch of a map's inputs, checked whole; and the window its map keeps. */
import assert from 'node:assert/strict';
import { MAX_BATCH_INPUTS, parseBatch } from '../../../../core/services/maps/input-batch.js';
import { MAX_WINDOW, windowSize } from '../../../../core/services/maps/window.js';
import { defaultScaling } from '../../../../core/model/workload/defaults.js';
import { SvcError } from '../../../../core/model/errors.js';

const line = (index: number, pickle = 'gAVLAy4=') => `${JSON.stringify({ index, pickle })}\n`;
const refused = (body: string, expected: number) => {
  try {
    parseBatch(Buffer.from(body), expected);
  } catch (error) {
    assert.ok(error instanceof SvcError && error.code === 'bad_request');
    return error;
  }
  assert.fail('the batch was taken');
};

describe('maps: a batch of inputs', () => {
  it('takes lines whose indices continue the sequence, blank lines and a last line without its break included', () => {
    const inputs = parseBatch(Buffer.from(`${line(5)}\n${line(6)}${line(7).trimEnd()}`), 5);
    assert.deepEqual(
      inputs.map((input) => input.index),
      [5, 6, 7],
    );
    assert.deepEqual(inputs[0]!.pickle, Buffer.from('gAVLAy4=', 'base64'));
    assert.deepEqual(parseBatch(Buffer.alloc(0), 9), []);
  });

  it('names the line that breaks a rule', () => {
    assert.deepEqual(refused(`${line(0)}${line(2)}`, 0).details, { line: 2, index: 2, expected: 1 });
    assert.match(refused('{"index": 0, "pickle": "abc"}', 0).message, /not base64/);
    assert.match(refused('{"index": 0, "pickle": ""}', 0).message, /not base64/);
    assert.match(refused('{"index": -1, "pickle": "gAVLAy4="}', 0).message, /index -1, not a whole number/);
    assert.match(refused('{"index": 0.5, "pickle": "gAVLAy4="}', 0).message, /index 0.5/);
    assert.match(refused('nope', 0).message, /line 1 of the batch is not JSON/);
    const many = Array.from({ length: MAX_BATCH_INPUTS + 1 }, (_, i) => line(i)).join('');
    assert.deepEqual(refused(many, 0).details, { line: MAX_BATCH_INPUTS + 1, maxInputs: MAX_BATCH_INPUTS });
  });

  it('keeps twice what the containers it may scale to take, plus 16, at most MAX_WINDOW', () => {
    const scaled = (maxContainers: number, tasksPerContainer = 1, workers = 1, concurrency = 1) =>
      windowSize({ ...defaultScaling, workers, concurrency, autoscaler: { minContainers: 0, maxContainers, tasksPerContainer } });
    assert.equal(scaled(1), 18);
    assert.equal(scaled(4), 24);
    assert.equal(scaled(3, 10), 76, 'tasks_per_container counts: the backlog must reach 3 × 10 to start 3 containers');
    assert.equal(scaled(2, 1, 4, 8), 144);
    assert.equal(scaled(1000, 10_000), MAX_WINDOW);
  });
});
