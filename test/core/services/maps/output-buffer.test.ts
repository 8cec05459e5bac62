/** A map's output buffer: one reader at a time, bounded while nobody reads, the end line for every reader once drained. */
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { HIGH_WATER_BYTES, OutputBuffer } from '../../../../core/services/maps/output-buffer.js';
import { SvcError } from '../../../../core/model/errors.js';

function buffer(highWaterLines = 4) {
  const events: string[] = [];
  const output = new OutputBuffer({
    highWaterLines,
    onDrain: () => events.push('drain'),
    onReader: (attached) => events.push(attached ? 'attached' : 'detached'),
    endLine: () => '{"type":"end"}\n',
  });
  return { output, events };
}

async function readAll(reader: Readable): Promise<string> {
  let text = '';
  for await (const chunk of reader) text += String(chunk);
  return text;
}

describe('maps: the output buffer', () => {
  it('keeps lines while nobody reads, is full at its high water, and drains to a reader, then gives the end line', async () => {
    const { output, events } = buffer();
    for (let i = 0; i < 4; i++) output.push(`{"i":${i}}\n`);
    assert.equal(output.full, true, 'four lines: the high water in lines');
    output.end();
    assert.equal(output.drained, false);
    const text = await readAll(output.attach());
    assert.equal(text, '{"i":0}\n{"i":1}\n{"i":2}\n{"i":3}\n{"type":"end"}\n');
    assert.equal(output.full, false);
    assert.equal(output.drained, true);
    assert.deepEqual(events, ['attached', 'drain', 'detached']);
    assert.equal(await readAll(output.attach()), '{"type":"end"}\n', 'a later reader gets the end line alone');
  });

  it('is full past its high water in bytes, and over its limit only far beyond', () => {
    const { output } = buffer(1_000_000);
    output.push(`${'x'.repeat(HIGH_WATER_BYTES)}\n`);
    assert.equal(output.full, true);
    assert.equal(output.overLimit, false);
  });

  it('takes one reader at a time, and the next once the first is gone', () => {
    const { output } = buffer();
    const first = output.attach();
    assert.throws(
      () => output.attach(),
      (error: unknown) => error instanceof SvcError && error.code === 'conflict',
    );
    first.destroy();
    assert.equal(output.reading, false);
    output.attach().destroy();
  });

  it('keeps nothing once dropped, and says it drained', () => {
    const { output, events } = buffer(2);
    output.push('a\n');
    output.push('b\n');
    output.drop();
    output.push('c\n');
    assert.equal(output.full, false);
    assert.deepEqual(events, ['drain']);
  });
});
