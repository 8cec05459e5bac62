/**
 * What core/infra/bundles/tar-reader.ts adds to tar-stream: it stops at the
 * end-of-archive block (as GNU tar and Python's tarfile do), bounds the
 * extended headers before one entry, and keeps the raw type flag of an entry
 * type tar-stream does not know.
 */
import assert from 'node:assert/strict';
import { readTar, TarFormatError, type TarHeader } from '../../../../core/infra/bundles/tar-reader.js';
import { END, entry, pax, tar } from './tar-writer.js';

/** The headers readTar reports for `bytes`, fed in chunks of `chunk` bytes. */
async function headersOf(bytes: Buffer, chunk = 700): Promise<TarHeader[]> {
  const seen: TarHeader[] = [];
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let at = 0; at < bytes.length; at += chunk) yield bytes.subarray(at, at + chunk);
  }
  await readTar(chunks(), {
    entry: async (header) => {
      seen.push(header);
      return null;
    },
  });
  return seen;
}

describe('readTar()', () => {
  it('stops at the end-of-archive block: an archive after it is not read, junk up to 1 MiB is accepted', async () => {
    const first = tar({ name: 'a.py', data: 'a' });
    const second = tar({ name: 'b.py', data: 'b' });
    for (const chunk of [100, 700, 64 * 1024]) {
      assert.deepEqual(
        (await headersOf(Buffer.concat([first, second]), chunk)).map((header) => header.path),
        ['a.py'],
        `in chunks of ${chunk}`,
      );
      assert.deepEqual(
        (await headersOf(Buffer.concat([first, Buffer.alloc(4096, 1)]), chunk)).map((header) => header.path),
        ['a.py'],
      );
    }
  });

  it('reads an empty archive (the end blocks alone) as no entries', async () => {
    assert.deepEqual(await headersOf(END), []);
  });

  it('refuses more than 1 MiB of extended headers before one entry', async () => {
    const huge = Buffer.concat([pax({ comment: 'x'.repeat(1100 * 1024) }), entry({ name: 'a.py', data: 'a' }), END]);
    await assert.rejects(
      headersOf(huge, 16 * 1024),
      (error) => error instanceof TarFormatError && error.rule === 'bad_header' && /extended headers/.test(error.message),
    );
  });

  it('reports an entry type tar-stream does not know as "other", with its raw type flag', async () => {
    const [header] = await headersOf(tar({ name: 'sparse', type: 'S' }, { name: 'v', type: 'V' }));
    assert.deepEqual({ type: header?.type, typeflag: header?.typeflag }, { type: 'other', typeflag: 'S' });
  });
});
