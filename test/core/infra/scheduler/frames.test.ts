import assert from 'node:assert/strict';
import { parseFrame } from '../../../../core/infra/scheduler/local/frames.js';

describe('parseFrame()', () => {
  it('reads every frame the runtime writes', () => {
    assert.deepEqual(parseFrame('{"t":"started","pid":12}'), { t: 'started', pid: 12 });
    assert.deepEqual(parseFrame('{"t":"err","text":"Traceback"}'), { t: 'err', text: 'Traceback' });
    assert.deepEqual(parseFrame('{"t":"error","message":"workers must be"}'), { t: 'error', message: 'workers must be' });
    assert.deepEqual(parseFrame('{"t":"event","event":"listening","worker":1,"pid":7,"socket":"/s/c-w1.sock"}'), {
      t: 'event',
      event: { event: 'listening', worker: 1, pid: 7, socket: '/s/c-w1.sock' },
    });
    assert.deepEqual(parseFrame('{"t":"event","event":"worker_exited","worker":0,"pid":7,"status":"signal SIGKILL","restart_in":0.1}'), {
      t: 'event',
      event: { event: 'worker_exited', worker: 0, pid: 7, status: 'signal SIGKILL', restartIn: 0.1 },
    });
    assert.deepEqual(parseFrame('{"t":"event","event":"worker_exited","worker":0,"pid":7,"status":"code 5","restart_in":null}'), {
      t: 'event',
      event: { event: 'worker_exited', worker: 0, pid: 7, status: 'code 5', restartIn: null },
    });
    assert.deepEqual(parseFrame('{"t":"event","event":"container_exited","container":"c-1","pid":9,"code":null,"signal":"SIGKILL"}'), {
      t: 'event',
      event: { event: 'container_exited', container: 'c-1', pid: 9, exit: { code: null, signal: 'SIGKILL' } },
    });
  });

  it('ignores lines that are not frames, or frames of the wrong shape', () => {
    for (const line of [
      '',
      'svc runtime: hello',
      '[1]',
      'null',
      '{"t":"started"}',
      '{"t":"started","pid":"12"}',
      '{"t":"event","event":"listening","pid":1}',
      '{"t":"nope"}',
    ]) {
      assert.equal(parseFrame(line), null, line);
    }
  });
});
