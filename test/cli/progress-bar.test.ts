import assert from 'node:assert/strict';
import { startProgressBar } from '../../cli/progress-bar.js';

describe('the progress bar of svc volume put | get', () => {
  it('on a terminal, redraws one line with the bar, the share, the bytes and the rate, and clears it at the end', async () => {
    const written: string[] = [];
    const bar = startProgressBar({ isTTY: true, write: (text: string) => written.push(text) }, 'put big.bin', 4 * 1024 * 1024);
    await new Promise((resolve) => setTimeout(resolve, 110));
    bar.advance(2 * 1024 * 1024);
    bar.advance(1024); // within 100 ms of the last drawing: not drawn again
    bar.stop();
    assert.equal(written.length, 3);
    assert.match(written[0]!, /^\r\u001b\[2Kput big\.bin ░{24} 0% 0 B of 4 MiB /);
    assert.match(written[1]!, /^\r\u001b\[2Kput big\.bin █{12}░{12} 50% 2 MiB of 4 MiB \S+ \S+\/s$/);
    assert.equal(written[2], '\r\u001b[2K');
  });

  it('elsewhere (CI, a file) writes nothing: the command says what moved, once per file', () => {
    const written: string[] = [];
    const bar = startProgressBar({ isTTY: false, write: (text: string) => written.push(text) }, 'get big.bin', 100);
    bar.advance(100);
    bar.stop();
    assert.deepEqual(written, []);
  });
});
