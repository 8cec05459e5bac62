/**
 * Safe extraction: every archive shape that could write outside the
 * destination, fill the disk or smuggle in a special file is refused with an
 * error naming the entry and the rule, and leaves nothing behind.
 */
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { SvcError } from '../../../../core/model/errors.js';
import { extractBundle } from '../../../../core/infra/bundles/extract.js';
import type { ExtractLimits } from '../../../../core/infra/bundles/types.js';
import { tempDir } from '../../../helpers/config.js';
import { END, entry, header, pax, tar, tarGz, type TarEntrySpec } from './tar-writer.js';

function archive(bytes: Buffer): string {
  const file = path.join(tempDir('svc-bundle-'), 'bundle.tar.gz');
  writeFileSync(file, bytes);
  return file;
}

/** Extracts into a fresh parent folder and returns the outcome and the folder. */
async function attempt(bytes: Buffer, limits: Partial<ExtractLimits> = {}) {
  const parent = tempDir('svc-code-');
  const dest = path.join(parent, 'code');
  const outcome = await extractBundle(archive(bytes), dest, limits).then(
    (result) => ({ result, error: null }),
    (error: unknown) => ({ result: null, error }),
  );
  return { ...outcome, parent, dest };
}

/** Asserts the refusal: its code, rule, entry and message, and that nothing was left behind. */
async function refuses(
  bytes: Buffer,
  expected: { code?: string; rule: string; entry: string | null; message: RegExp },
  limits: Partial<ExtractLimits> = {},
) {
  const { error, parent } = await attempt(bytes, limits);
  assert.ok(error instanceof SvcError, `expected an SvcError, got ${String(error)}`);
  assert.equal(error.code, expected.code ?? 'bundle_invalid');
  assert.deepEqual(error.details, { entry: expected.entry, rule: expected.rule });
  assert.match(error.message, expected.message);
  assert.match(error.message, /^refused to extract bundle bundle\.tar\.gz: /);
  assert.deepEqual(readdirSync(parent), [], 'neither the destination nor a temporary folder is left');
}

const file = (name: string, data = 'x', mode = 0o644): TarEntrySpec => ({ name, data, mode });

describe('extractBundle()', () => {
  describe('a well-formed bundle', () => {
    it('extracts files, folders and links that stay inside, with normalised modes', async () => {
      const { result, dest, error } = await attempt(
        tarGz(
          { name: 'pkg/', type: '5', mode: 0o700 },
          file('pkg/mod.py', 'X = 1\n', 0o600),
          file('run.sh', '#!/bin/sh\n', 0o700),
          file('./dot/slash.txt', 'ok'),
          { name: 'alias.py', type: '2', linkname: 'pkg/mod.py' },
          { name: 'pkg/up', type: '2', linkname: '..' },
          { name: 'pkg/through', type: '2', linkname: 'up/run.sh' },
        ),
      );
      assert.equal(error, null);
      assert.deepEqual(result, { dir: dest, reused: false, entries: 7, bytes: 18 });
      assert.equal(readFileSync(path.join(dest, 'pkg/mod.py'), 'utf8'), 'X = 1\n');
      assert.equal(readFileSync(path.join(dest, 'dot/slash.txt'), 'utf8'), 'ok');
      assert.equal(statSync(path.join(dest, 'run.sh')).mode & 0o777, 0o755);
      assert.equal(statSync(path.join(dest, 'pkg/mod.py')).mode & 0o777, 0o644);
      assert.equal(readlinkSync(path.join(dest, 'alias.py')), 'pkg/mod.py');
      assert.equal(readFileSync(path.join(dest, 'pkg/through'), 'utf8'), '#!/bin/sh\n');
    });

    it('reads pax paths and GNU long names longer than the 100 bytes of a header', async () => {
      const long = `${'deep/'.repeat(30)}module.py`;
      const gnu = `${'gnu/'.repeat(30)}x.py`;
      const { dest, error } = await attempt(
        tarGz(pax({ path: long }), file('ignored-name'), entry({ name: '././@LongLink', type: 'L', data: `${gnu}\0` }), file('short')),
      );
      assert.equal(error, null);
      assert.ok(existsSync(path.join(dest, long)));
      assert.ok(existsSync(path.join(dest, gnu)));
      assert.ok(!existsSync(path.join(dest, 'ignored-name')));
    });

    it('reuses a destination that exists, without reading the archive', async () => {
      const parent = tempDir('svc-code-');
      const dest = path.join(parent, 'abc');
      const bytes = tarGz(file('app.py'));
      assert.equal((await extractBundle(archive(bytes), dest)).reused, false);
      const again = await extractBundle(archive(Buffer.from('not even gzip')), dest);
      assert.deepEqual(again, { dir: dest, reused: true, entries: 0, bytes: 0 });
      assert.deepEqual(readdirSync(parent), ['abc']);
    });
  });

  describe('refuses', () => {
    it('an absolute path', () =>
      refuses(tarGz(file('/etc/cron.d/evil')), {
        rule: 'absolute_path',
        entry: '/etc/cron.d/evil',
        message: /entry "\/etc\/cron\.d\/evil" has an absolute path/,
      }));

    it('a path starting with ..', () =>
      refuses(tarGz(file('../x')), { rule: 'parent_component', entry: '../x', message: /entry "\.\.\/x" has a "\.\." component/ }));

    it('a path that climbs out through a folder (a/../../x)', () =>
      refuses(tarGz(file('a/../../x')), { rule: 'parent_component', entry: 'a/../../x', message: /"\.\." component/ }));

    it('a .. hidden in a pax path', () =>
      refuses(tarGz(pax({ path: 'ok/../../../x' }), file('harmless')), {
        rule: 'parent_component',
        entry: 'ok/../../../x',
        message: /"\.\." component/,
      }));

    it('an absolute GNU long name', () =>
      refuses(tarGz(entry({ name: '././@LongLink', type: 'L', data: '/tmp/evil\0' }), file('short')), {
        rule: 'absolute_path',
        entry: '/tmp/evil',
        message: /absolute path/,
      }));

    it('a symlink to /etc', () =>
      refuses(tarGz({ name: 'etc', type: '2', linkname: '/etc' }), {
        rule: 'link_outside',
        entry: 'etc',
        message: /entry "etc" is a link to the absolute path "\/etc"/,
      }));

    it('a symlink climbing out with ..', () =>
      refuses(tarGz({ name: 'pkg/', type: '5' }, { name: 'pkg/out', type: '2', linkname: '../../secret' }), {
        rule: 'link_outside',
        entry: 'pkg/out',
        message: /entry "pkg\/out" is a link to "\.\.\/\.\.\/secret", which leads outside the bundle/,
      }));

    it('a symlink escaping through a chain of links that each look inside', () =>
      // sub/up -> .. is the root; esc -> sub/up/.. reads as "sub" but resolves to the root's parent.
      refuses(
        tarGz(
          { name: 'sub/', type: '5' },
          { name: 'sub/up', type: '2', linkname: '..' },
          { name: 'esc', type: '2', linkname: 'sub/up/..' },
        ),
        {
          rule: 'link_outside',
          entry: 'esc',
          message: /entry "esc" is a link to "sub\/up\/\.\.", which leads outside the bundle/,
        },
      ));

    it('a symlink escaping through a link that comes later in the archive', () =>
      refuses(
        tarGz(
          { name: 'esc', type: '2', linkname: 'sub/up/..' },
          { name: 'sub/', type: '5' },
          { name: 'sub/up', type: '2', linkname: '..' },
        ),
        {
          rule: 'link_outside',
          entry: 'esc',
          message: /leads outside the bundle/,
        },
      ));

    it('links that loop', () =>
      refuses(tarGz({ name: 'a', type: '2', linkname: 'b/x' }, { name: 'b', type: '2', linkname: 'a/y' }), {
        rule: 'link_loop',
        entry: 'a',
        message: /loops through other links/,
      }));

    it('a file written through a symlink', () =>
      refuses(tarGz({ name: 'l', type: '2', linkname: '.' }, file('l/x')), {
        rule: 'beneath_link',
        entry: 'l/x',
        message: /entry "l\/x" lies beneath the link "l"/,
      }));

    it('a symlink that replaces a folder after a file was written into it', () =>
      refuses(tarGz(file('d/x'), { name: 'd', type: '2', linkname: '/etc' }), {
        rule: 'duplicate',
        entry: 'd',
        message: /replaces a folder/,
      }));

    it('the same path twice', () =>
      refuses(tarGz(file('app.py', 'a'), file('app.py', 'b')), { rule: 'duplicate', entry: 'app.py', message: /appears twice/ }));

    it('any hard link, even one inside', () =>
      refuses(tarGz(file('a.py'), { name: 'b.py', type: '1', linkname: 'a.py' }), {
        rule: 'hard_link',
        entry: 'b.py',
        message: /entry "b\.py" is a hard link \(to "a\.py"\)/,
      }));

    it('a character device', () =>
      refuses(tarGz({ name: 'null', type: '3' }), { rule: 'special_file', entry: 'null', message: /entry "null" is a character device/ }));

    it('a block device', () =>
      refuses(tarGz({ name: 'sda', type: '4' }), { rule: 'special_file', entry: 'sda', message: /is a block device/ }));

    it('a fifo', () =>
      refuses(tarGz({ name: 'pipe', type: '6' }), { rule: 'special_file', entry: 'pipe', message: /entry "pipe" is a fifo/ }));

    it('an unknown entry type', () =>
      refuses(tarGz({ name: 'sparse', type: 'S' }), { rule: 'unsupported_type', entry: 'sparse', message: /unsupported tar type "S"/ }));

    it('a total size past the limit, before writing the entry that passes it', () =>
      refuses(
        tarGz(file('a', 'x'.repeat(600)), file('b', 'y'.repeat(600))),
        {
          code: 'bundle_too_large',
          rule: 'total_too_large',
          entry: 'b',
          message: /entry "b" \(600 B\) would take the bundle past its limit of 1000 B in all/,
        },
        { maxTotalBytes: 1000 },
      ));

    it('an entry past the per-entry limit', () =>
      refuses(
        tarGz(file('big', 'z'.repeat(2048))),
        {
          code: 'bundle_too_large',
          rule: 'entry_too_large',
          entry: 'big',
          message: /entry "big" is 2 KiB, more than the 1 KiB one entry may hold/,
        },
        {
          maxEntryBytes: 1024,
        },
      ));

    it('a gzip bomb: 1 GiB of zeros in a 1 MiB file, from its header, in a moment', async () => {
      // 1024 gzip members of 1 MiB of zeros each: gunzip reads them as one stream.
      const mebibyte = gzipSync(Buffer.alloc(1024 * 1024));
      const bomb = Buffer.concat([gzipSync(header({ name: 'zeros', size: 1024 ** 3 })), ...Array.from({ length: 1024 }, () => mebibyte)]);
      assert.ok(bomb.length < 2 * 1024 * 1024);
      const started = Date.now();
      await refuses(bomb, {
        code: 'bundle_too_large',
        rule: 'entry_too_large',
        entry: 'zeros',
        message: /entry "zeros" is 1 GiB, more than the 256 MiB one entry may hold/,
      });
      assert.ok(Date.now() - started < 2000, 'refused before inflating the zeros');
    });

    it('more entries than the limit', () =>
      refuses(
        tarGz(file('a'), file('b'), file('c'), file('d')),
        { code: 'bundle_too_large', rule: 'too_many_entries', entry: 'd', message: /one more than the 3 entries/ },
        { maxEntries: 3 },
      ));

    it('a truncated gzip file', () => {
      const whole = tarGz(file('a.py', 'x'.repeat(5000)), file('b.py', 'y'));
      return refuses(whole.subarray(0, whole.length - 12), { rule: 'truncated', entry: null, message: /gzip stream ends early/ });
    });

    it('a tar that ends inside an entry', () =>
      refuses(gzipSync(Buffer.concat([header({ name: 'a.py', size: 5000 }), Buffer.alloc(1000, 0x61)])), {
        rule: 'truncated',
        entry: 'a.py',
        message: /ends inside entry "a\.py"/,
      }));

    it('a tar without its end-of-archive block', () =>
      refuses(gzipSync(entry(file('a.py'))), { rule: 'truncated', entry: null, message: /without its end-of-archive block/ }));

    it('a file that is not gzip', () =>
      refuses(Buffer.from('PK\u0003\u0004 a zip, perhaps'), { rule: 'not_gzip', entry: null, message: /it is not a gzip file/ }));

    it('gzip data that is not a tar', () =>
      refuses(gzipSync(Buffer.alloc(2048, 0x41)), { rule: 'bad_header', entry: null, message: /wrong checksum/ }));

    it('corrupt gzip data', () => {
      const bytes = Buffer.from(tarGz(file('a.py', 'hello')));
      bytes.fill(0xff, 10, 30);
      return refuses(bytes, { rule: 'corrupt', entry: null, message: /gzip data is corrupt/ });
    });

    it('a megabyte of junk after the end of the archive', () =>
      refuses(gzipSync(Buffer.concat([tar(file('a.py')), Buffer.alloc(2 * 1024 * 1024, 1)])), {
        rule: 'trailing_data',
        entry: null,
        message: /after the end of the archive/,
      }));

    it('a folder that claims a size', () =>
      refuses(tarGz({ name: 'd/', type: '5', size: 512, data: Buffer.alloc(512) }), {
        rule: 'bad_header',
        entry: 'd/',
        message: /is a directory with a size/,
      }));
  });

  it('leaves a symlink in place, never following it, when a later file has its name', async () => {
    const { error, parent } = await attempt(tarGz({ name: 'x', type: '2', linkname: 'y' }, file('x')));
    assert.ok(error instanceof SvcError && (error.details as { rule: string }).rule === 'duplicate');
    assert.deepEqual(readdirSync(parent), []);
  });

  it('keeps the end blocks Python writes (padding to 10 KiB) as valid', async () => {
    const padded = Buffer.concat([entry(file('a.py')), END, Buffer.alloc(8192)]);
    const { error, dest } = await attempt(gzipSync(padded));
    assert.equal(error, null);
    assert.ok(lstatSync(path.join(dest, 'a.py')).isFile());
  });
});
