/**
 * An upload onto a file already there: the new bytes take the name at once (the replaced file's size said),
 * and the file replaced is removed after the answer (freeing a large file is not the upload's to wait for),
 * leaving nothing behind.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFile } from '../../../../core/infra/volumes/folder-files.js';
import { SvcError } from '../../../../core/model/errors.js';
import { tempDir } from '../../../helpers/config.js';

describe('an upload that replaces a file', () => {
  const root = path.join(tempDir('svc-volume-replace-'), 'volume');
  const put = (bytes: Buffer) =>
    writeFile(root, 'v', ['models', 'weights.bin'], Readable.from([bytes]), 1024 ** 2, () => new SvcError('volume_full', 'full'));

  it('gives the name the new bytes, and leaves only the file once the old one is gone', async () => {
    mkdirSync(root, { recursive: true });
    await put(Buffer.alloc(4096, 1));
    const { entry, replacedBytes } = await put(Buffer.from('the second version'));
    assert.deepEqual([entry.path, entry.size, replacedBytes], ['models/weights.bin', 18, 4096]);
    assert.equal(readFileSync(path.join(root, 'models', 'weights.bin'), 'utf8'), 'the second version');
    let names = readdirSync(path.join(root, 'models'));
    for (let waited = 0; names.length > 1 && waited < 100; waited += 1) {
      await sleep(20);
      names = readdirSync(path.join(root, 'models'));
    }
    assert.deepEqual(names, ['weights.bin']);
  });
});
