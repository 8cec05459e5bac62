/**
 * Unpacks image layers into a root filesystem in order, as containerd's applier does: OCI whiteouts
 * (`.wh.<name>` deletes `<name>` from lower layers, `.wh..wh..opq` empties a directory of lower
 * layers' contents), every entry resolved inside the rootfs (resolveInRoot), device nodes skipped
 * (the driver creates the /dev nodes it provides itself).
 */
import {
  chmodSync,
  existsSync,
  lchownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { resolveInRoot } from './root-path.js';
import { readTar, type TarEntry } from './tar-reader.js';

const WHITEOUT = '.wh.';
const OPAQUE = '.wh..wh..opq';

function removeExisting(target: string, keepDirectory: boolean): void {
  let stat;
  try {
    stat = lstatSync(target);
  } catch {
    return;
  }
  if (keepDirectory && stat.isDirectory()) return;
  rmSync(target, { recursive: true, force: true });
}

function applyEntry(root: string, entry: TarEntry, written: Set<string>): void {
  const parentInner = path.posix.dirname(path.posix.join('/', entry.name));
  const base = path.posix.basename(entry.name);
  if (!base || base === '.' || base === '..') {
    if (entry.type === '5') return; // the root directory itself
    throw new Error(`layer entry with no name: ${entry.name}`);
  }
  const parent = resolveInRoot(root, parentInner, true);
  mkdirSync(parent, { recursive: true });
  if (base === OPAQUE) {
    for (const child of readdirSync(parent)) {
      const full = path.join(parent, child);
      if (!written.has(full)) rmSync(full, { recursive: true, force: true });
    }
    return;
  }
  if (base.startsWith(WHITEOUT)) {
    rmSync(path.join(parent, base.slice(WHITEOUT.length)), { recursive: true, force: true });
    return;
  }
  const target = path.join(parent, base);
  switch (entry.type) {
    case '5':
      removeExisting(target, true);
      if (!existsSync(target)) mkdirSync(target);
      chmodSync(target, entry.mode & 0o7777);
      break;
    case '0':
      removeExisting(target, false);
      writeFileSync(target, entry.data, { mode: entry.mode & 0o7777 });
      chmodSync(target, entry.mode & 0o7777);
      break;
    case '2':
      removeExisting(target, false);
      // The target text is kept as written: it is only ever followed inside the rootfs.
      symlinkSync(entry.linkname, target);
      break;
    case '1': {
      const source = resolveInRoot(root, entry.linkname, false);
      if (!lstatSync(source, { throwIfNoEntry: false })) throw new Error(`hard link ${entry.name} to missing ${entry.linkname}`);
      removeExisting(target, false);
      linkSync(source, target);
      break;
    }
    default:
      return; // devices, fifos: not created from layers
  }
  lchownSync(target, entry.uid, entry.gid);
  written.add(target);
}

export async function unpackLayers(root: string, layers: readonly string[]): Promise<void> {
  mkdirSync(root, { recursive: true });
  for (const layer of layers) {
    const archive = gunzipSync(await readFile(layer));
    const written = new Set<string>();
    for await (const entry of readTar(archive)) applyEntry(root, entry, written);
  }
}
