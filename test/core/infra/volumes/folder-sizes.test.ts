/**
 * The sizes FolderStorage gives for an upload's room: walked, then kept with this server's own uploads
 * and replacements counted in, for callers that accept a size of some age; removals forget them, and
 * files written beside svc (as a container writes them) count from the next walk.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FolderStorage } from '../../../../core/infra/volumes/folder-storage.js';
import { SvcError } from '../../../../core/model/errors.js';
import { tempDir } from '../../../helpers/config.js';

describe('volume sizes kept for uploads (FolderStorage)', () => {
  const root = tempDir('svc-volume-sizes-');
  let now = 1_000_000;
  const storage = new FolderStorage(root, () => now);
  const at = (file: string) => ({ workspace: 'default', volume: 'data', parts: [file] });
  const put = (file: string, bytes: number) =>
    storage.write(at(file), Readable.from([Buffer.alloc(bytes)]), 1024 ** 2, () => new SvcError('volume_full', 'full'));
  const size = async (maxAgeMs?: number) => (await storage.usedBytes('default', ['data'], maxAgeMs)).get('data');
  const byAContainer = (file: string, bytes: number) => writeFileSync(path.join(root, 'default', 'data', file), Buffer.alloc(bytes));

  it('counts its own uploads into a kept size, and what others wrote from the next walk', async () => {
    await storage.create('default', 'data');
    await put('a.bin', 1000);
    assert.equal(await size(), 1000, 'walked');
    byAContainer('b.bin', 500);
    await put('c.bin', 200);
    assert.equal(await size(30_000), 1200, 'kept, with the upload since; the container’s file not walked yet');
    await put('c.bin', 50);
    assert.equal(await size(30_000), 1550 - 500, 'a replaced file’s bytes taken off');
    assert.equal(await size(), 1550, 'walked again when asked for now');
    byAContainer('d.bin', 100);
    now += 30_001;
    assert.equal(await size(30_000), 1650, 'walked again once older than asked');
    await storage.remove(at('d.bin'), false);
    byAContainer('e.bin', 7);
    assert.equal(await size(30_000), 1557, 'a removal forgets the size: walked again');
  });
});
