/**
 * A container that mounts a volume may swap one of its folders for a link to elsewhere while svc works
 * on a path through it (after the path was checked). Here a loop swaps `a` between a real folder and a
 * link out of the volume, between every step of svc's reads, listings, removals and writes: none may
 * ever reach the folder outside.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { listEntries, openFile, removePath, writeFile } from '../../../../core/infra/volumes/folder-files.js';
import { SvcError } from '../../../../core/model/errors.js';
import { tempDir } from '../../../helpers/config.js';

const ROUNDS = 300;
/** Rounds of the recursive removal, each a whole tree made and removed. */
const TREE_ROUNDS = 60;

describe('volume files while a container swaps a folder for a link out of the volume', function () {
  this.timeout(60_000);
  const base = tempDir('svc-volume-race-');
  const root = path.join(base, 'volume');
  const outside = path.join(base, 'outside');
  const a = path.join(root, 'a');
  let swapping = false;

  /**
   * Swaps `a` (a real folder) for a link to `outside` and back, between every turn of the event loop.
   * svc's own file calls run on other threads meanwhile (a folder made again, say): a swap they get in
   * the way of is tried again next turn.
   */
  function startSwapping(a = path.join(root, 'a')): Promise<void> {
    swapping = true;
    let linked = false;
    const unlink = () => {
      rmSync(a, { recursive: true, force: true });
      if (existsSync(`${a}.real`)) renameSync(`${a}.real`, a); // not when svc removed it meanwhile
      linked = false;
    };
    const link = () => {
      renameSync(a, `${a}.real`);
      try {
        symlinkSync(outside, a);
        linked = true;
      } catch {
        unlink();
      }
    };
    return new Promise((resolve) => {
      const step = () => {
        try {
          if (linked) unlink();
          else if (swapping) link();
        } catch {
          // in svc's way this turn
        }
        if (swapping || linked) setImmediate(step);
        else resolve();
      };
      setImmediate(step);
    });
  }

  beforeEach(() => {
    rmSync(base, { recursive: true, force: true });
    mkdirSync(path.join(a), { recursive: true });
    mkdirSync(outside, { recursive: true });
    writeFileSync(path.join(a, 'secret.txt'), 'inside');
    writeFileSync(path.join(outside, 'secret.txt'), 'OUTSIDE');
    mkdirSync(path.join(outside, 'victim'));
    mkdirSync(path.join(a, 'victim'));
  });

  /** What a path swapped mid-way may answer: refused as outside, or not found where it was looked for. */
  const refusedOrMissing = (error: unknown) =>
    (error instanceof SvcError && (error.code === 'bad_request' || error.code === 'not_found' || error.code === 'conflict')) ||
    ['ENOENT', 'ENOTDIR', 'ELOOP', 'EISDIR', 'ENOTEMPTY'].includes(String((error as NodeJS.ErrnoException).code));

  it('a download never gives a file outside the volume', async () => {
    const swapped = startSwapping();
    for (let i = 0; i < ROUNDS; i++) {
      try {
        const file = await openFile(root, 'v', ['a', 'secret.txt']);
        const parts: Buffer[] = [];
        for await (const part of file.stream as AsyncIterable<Buffer>) parts.push(part);
        assert.equal(Buffer.concat(parts).toString(), 'inside');
      } catch (error) {
        if (!refusedOrMissing(error)) throw error;
      }
    }
    swapping = false;
    await swapped;
  });

  it('a listing never names what is outside', async () => {
    writeFileSync(path.join(outside, 'only-outside.txt'), 'x');
    const swapped = startSwapping();
    for (let i = 0; i < ROUNDS; i++) {
      try {
        const names = (await listEntries(root, 'v', ['a'], true, { after: null, limit: 10_000 })).entries.map((entry) => entry.path);
        assert.ok(!names.includes('a/only-outside.txt'), names.join(' '));
      } catch (error) {
        if (!refusedOrMissing(error)) throw error;
      }
    }
    swapping = false;
    await swapped;
  });

  it('a removal never removes what is outside, and an upload never lands there', async () => {
    const swapped = startSwapping();
    for (let i = 0; i < ROUNDS && existsSync(path.join(outside, 'victim')); i++) {
      await removePath(root, 'v', ['a', 'victim'], true).catch((error: unknown) => {
        if (!refusedOrMissing(error)) throw error;
      });
      await writeFile(
        root,
        'v',
        ['a', 'planted.txt'],
        Readable.from([Buffer.from('x')]),
        10,
        () => new SvcError('volume_full', 'full'),
      ).catch((error: unknown) => {
        if (!refusedOrMissing(error)) throw error;
      });
      if (!existsSync(path.join(a, 'victim')) && !existsSync(path.join(`${a}.real`, 'victim')))
        mkdirSync(path.join(existsSync(`${a}.real`) ? `${a}.real` : a, 'victim'));
    }
    swapping = false;
    await swapped;
    assert.ok(existsSync(path.join(outside, 'victim')), 'the folder outside the volume is still there');
    assert.ok(!existsSync(path.join(outside, 'planted.txt')), 'nothing was written outside the volume');
  });

  it('a recursive removal never follows a subfolder swapped for a link while it works', async () => {
    writeFileSync(path.join(outside, 'keep.txt'), 'x');
    const sub = path.join(a, 'tree', 'sub');
    for (let i = 0; i < TREE_ROUNDS && existsSync(path.join(outside, 'keep.txt')); i++) {
      mkdirSync(sub, { recursive: true });
      for (let f = 0; f < 20; f++) writeFileSync(path.join(sub, `f${f}`), 'x');
      const swapped = startSwapping(sub);
      await removePath(root, 'v', ['a', 'tree'], true).catch((error: unknown) => {
        if (!refusedOrMissing(error)) throw error;
      });
      swapping = false;
      await swapped;
      rmSync(path.join(a, 'tree'), { recursive: true, force: true });
      rmSync(`${sub}.real`, { recursive: true, force: true });
    }
    assert.ok(existsSync(path.join(outside, 'keep.txt')), 'the file outside the volume is still there');
    assert.equal(readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'OUTSIDE');
  });
});
