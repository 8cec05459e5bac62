/**
 * A damaged log is reported, never papered over; only an unacknowledged,
 * cut-short last record is dropped (with a warning).
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openFileStateStore } from '../../../../core/infra/state/file-store.js';
import { encodeRecord, FILE_HEADER_BYTES, readRecordHeader, RECORD_HEADER_BYTES } from '../../../../core/infra/state/log-codec.js';
import { assertCode } from './conformance.js';
import { tempDirs } from './temp-dirs.js';

const newDataDir = tempDirs();

/** A closed store holding keys k/0..k/9 (one record each, after the index record); returns its log path. */
async function storeWithTenKeys(): Promise<{ dataDir: string; log: string }> {
  const dataDir = newDataDir();
  const store = await openFileStateStore({ dataDir });
  for (let i = 0; i < 10; i++) await store.put(`k/${i}`, `value ${i}`);
  await store.close();
  return { dataDir, log: path.join(store.dir, 'state.log') };
}

/** Byte offsets of the records in a log. */
function recordOffsets(log: string): number[] {
  const bytes = readFileSync(log);
  const offsets: number[] = [];
  for (let offset = FILE_HEADER_BYTES; offset < bytes.length; ) {
    offsets.push(offset);
    const header = readRecordHeader(bytes, offset);
    assert.ok(header.ok);
    offset += RECORD_HEADER_BYTES + header.payloadLength;
  }
  return offsets;
}

function flipByte(file: string, offset: number): void {
  const bytes = readFileSync(file);
  bytes[offset] = bytes[offset]! ^ 0x10;
  writeFileSync(file, bytes);
}

describe('FileStateStore with a damaged log', () => {
  it('drops a cut-short last record with a warning, keeps the rest and appends after it', async () => {
    const { dataDir, log } = await storeWithTenKeys();
    const whole = statSync(log).size;
    const unacknowledged = encodeRecord({
      kind: 'put',
      index: 99,
      createIndex: 99,
      key: 'k/torn',
      value: Buffer.from('never acknowledged'),
    });
    appendFileSync(log, unacknowledged.subarray(0, unacknowledged.length - 5));

    const store = await openFileStateStore({ dataDir });
    assert.equal(store.warnings.length, 1);
    assert.match(
      store.warnings[0]!,
      new RegExp(`state\\.log: dropped an incomplete last record \\(${unacknowledged.length - 5} bytes at byte ${whole}\\)`),
    );
    assert.equal((await store.keys('k/')).length, 10);
    assert.equal(await store.get('k/torn'), null);
    assert.equal(statSync(log).size, whole, 'the torn bytes were cut off');
    await store.put('k/after', 'x');
    await store.close();

    const reopened = await openFileStateStore({ dataDir });
    assert.deepEqual(reopened.warnings, []);
    assert.equal((await reopened.get('k/after'))?.value.toString(), 'x');
    await reopened.close();
  });

  it('drops a tail of zeros (a file system extended the file but lost the data) with a warning', async () => {
    const { dataDir } = await storeWithTenKeys();
    appendFileSync(path.join(dataDir, 'state', 'state.log'), Buffer.alloc(300));
    const store = await openFileStateStore({ dataDir });
    assert.match(store.warnings.join('\n'), /dropped an incomplete last record \(300 bytes/);
    assert.equal((await store.keys('k/')).length, 10);
    await store.close();
  });

  it('reports a flipped byte in the middle as state_corrupt with the file, the offset and a way out', async () => {
    const { dataDir, log } = await storeWithTenKeys();
    const damaged = recordOffsets(log)[5]!;
    flipByte(log, damaged + RECORD_HEADER_BYTES + 12);
    const before = readFileSync(log);

    const error = await assertCode(openFileStateStore({ dataDir }), 'state_corrupt');
    assert.match(
      error.message,
      new RegExp(`${log.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged at byte ${damaged}: record checksum mismatch`),
    );
    assert.deepEqual(error.details, { file: log, offset: damaged, reason: 'record checksum mismatch' });
    assert.match(error.hint ?? '', new RegExp(`truncate -s ${damaged} `));
    assert.deepEqual(readFileSync(log), before, 'the damaged file is left as it was');

    // The recovery the hint gives: keep what precedes the damage.
    truncateSync(log, damaged);
    const recovered = await openFileStateStore({ dataDir });
    assert.deepEqual(await recovered.keys('k/'), ['k/0', 'k/1', 'k/2', 'k/3']);
    await recovered.close();
  });

  it('reports a damaged record length as state_corrupt, not as a torn tail', async () => {
    const { dataDir, log } = await storeWithTenKeys();
    const damaged = recordOffsets(log)[3]!;
    flipByte(log, damaged + 2);
    const error = await assertCode(openFileStateStore({ dataDir }), 'state_corrupt');
    assert.deepEqual(error.details, { file: log, offset: damaged, reason: 'record header checksum mismatch' });
  });

  it('reports a flipped byte in the last record as state_corrupt: a whole record was written, so it may have been acknowledged', async () => {
    const { dataDir, log } = await storeWithTenKeys();
    const last = recordOffsets(log).at(-1)!;
    flipByte(log, statSync(log).size - 1);
    const error = await assertCode(openFileStateStore({ dataDir }), 'state_corrupt');
    assert.equal((error.details as { offset: number }).offset, last);
  });

  it('reports a file that is not a state log as state_corrupt at byte 0', async () => {
    const dataDir = newDataDir();
    await (await openFileStateStore({ dataDir })).close();
    const log = path.join(dataDir, 'state', 'state.log');
    writeFileSync(log, '{"apps": {}}\n');
    const error = await assertCode(openFileStateStore({ dataDir }), 'state_corrupt');
    assert.equal((error.details as { offset: number }).offset, 0);
    assert.match(error.hint ?? '', /backup/);
    writeFileSync(log, '');
    await assertCode(openFileStateStore({ dataDir }), 'state_corrupt');
  });

  it('releases its lock when opening fails, so the store opens once repaired', async () => {
    const { dataDir, log } = await storeWithTenKeys();
    const offset = recordOffsets(log)[2]! + RECORD_HEADER_BYTES + 3;
    flipByte(log, offset);
    await assertCode(openFileStateStore({ dataDir }), 'state_corrupt');
    flipByte(log, offset);
    const store = await openFileStateStore({ dataDir });
    assert.deepEqual(store.warnings, []);
    assert.equal((await store.keys('k/')).length, 10);
    await store.close();
  });
});
