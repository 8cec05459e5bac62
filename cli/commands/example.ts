/**
 * `svc example list [--json]` and `svc example download <name> [--dir <dir>]
 * [--force] [--json]`: the example projects the server ships
 * (`GET /api/v1/examples`, `GET /api/v1/examples/:name`).
 *
 * A download is a tar.gz. It is checked before anything is written where the
 * user sees it: only files and folders (no links of any kind, no devices),
 * no absolute paths, no `..`, bounded sizes (core/infra/bundles/extract.ts does
 * the extraction and refuses the rest). It goes into a new folder,
 * `./<name>` by default, which appears whole or not at all; an existing
 * folder that is not empty is refused unless `--force`, which writes the
 * example's files into it (replacing files of the same name, leaving the
 * others, and refusing to write through a link in it).
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createGunzip } from 'node:zlib';
import type { ExampleSummary } from '../../core/http/api/examples.js';
import { extractBundle } from '../../core/infra/bundles/extract.js';
import { formatBytes } from '../../core/model/format-bytes.js';
import { readTar, TarFormatError, type TarHeader } from '../../core/infra/bundles/tar-reader.js';
import type { ExtractLimits } from '../../core/infra/bundles/types.js';
import { SvcError } from '../../core/model/errors.js';
import { nameProblem } from '../../core/model/names.js';
import { API_PREFIX, dropBody } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { shellQuote } from '../shell-quote.js';
import { formatTable } from '../table.js';

export interface ExampleListFlags {
  readonly json?: boolean;
}

export interface ExampleDownloadFlags {
  /** Where to write the example; default `./<name>` (relative to the context's cwd). */
  readonly dir?: string;
  /** Write into an existing folder that is not empty. */
  readonly force?: boolean;
  readonly json?: boolean;
}

/** What `download` did; `--json` prints it. */
export interface ExampleDownloadResult {
  readonly name: string;
  /** The absolute path of the folder. */
  readonly dir: string;
  /** The files written, relative to `dir`, sorted. */
  readonly files: readonly string[];
}

/** Bounds on a downloaded example: generous for a sample project, small for a bomb. */
export const EXAMPLE_LIMITS: ExtractLimits = { maxTotalBytes: 64 * 1024 * 1024, maxEntryBytes: 32 * 1024 * 1024, maxEntries: 10_000 };

export async function exampleList(context: CommandContext, flags: ExampleListFlags = {}): Promise<ExampleSummary[]> {
  const { client } = await connect(context);
  const { examples } = await client.get<{ examples: ExampleSummary[] }>(`${API_PREFIX}/examples`);
  const { out } = context;
  if (flags.json) {
    out.result(JSON.stringify({ examples }, null, 2));
    return examples;
  }
  if (examples.length === 0) {
    out.step('this server ships no examples');
    return examples;
  }
  for (const line of formatTable(
    ['NAME', 'DESCRIPTION'],
    examples.map((e) => [e.name, e.description]),
    out.color,
  ))
    out.result(line);
  out.step('svc example download <name> writes one into ./<name>');
  return examples;
}

export async function exampleDownload(
  context: CommandContext,
  name: string,
  flags: ExampleDownloadFlags = {},
): Promise<ExampleDownloadResult> {
  const { out } = context;
  // The name becomes the default folder: it must be a plain name, checked before anything else.
  const problem = nameProblem(String(name), 'example');
  if (problem !== null) {
    throw new SvcError('name_invalid', `the example name ${JSON.stringify(String(name))} ${problem}.`, {
      hint: '`svc example list` lists the examples by name.',
      details: { kind: 'example', name: String(name) },
    });
  }
  const dest = path.resolve(context.cwd, flags.dir ?? name);
  const state = await destinationState(dest);
  if (state === 'not-empty' && !flags.force) {
    throw new SvcError('conflict', `${dest} already exists and is not empty; svc example download writes into a new folder.`, {
      hint: `Choose another folder with --dir, or pass --force to write the example's files into it (files of the same name are replaced).`,
      details: { dir: dest },
    });
  }

  const { client } = await connect(context);
  out.step(`downloading example ${name}`);
  const response = await client.send('GET', `${API_PREFIX}/examples/${encodeURIComponent(name)}`, {
    headers: { Accept: 'application/gzip' },
  });
  const type = response.headers.get('content-type') ?? '';
  if (!/^application\/(gzip|x-gzip)\b/.test(type)) {
    dropBody(response);
    throw new SvcError(
      'unexpected_response',
      `the server answered the example ${name} with ${type === '' ? 'no Content-Type' : type}, not application/gzip.`,
      {
        hint: `Check that ${client.server} is an svc server.`,
      },
    );
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > EXAMPLE_LIMITS.maxTotalBytes) {
    dropBody(response);
    throw tooLarge(name, declared);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > EXAMPLE_LIMITS.maxTotalBytes) throw tooLarge(name, size);
    chunks.push(chunk as Uint8Array);
  }

  const work = await mkdtemp(path.join(os.tmpdir(), 'svc-example-'));
  try {
    const archive = path.join(work, `${name}.tar.gz`);
    await writeFile(archive, Buffer.concat(chunks));
    await assertPlainEntries(archive, name);
    const files = await install(archive, dest, state);
    const result: ExampleDownloadResult = { name, dir: dest, files };
    if (flags.json) {
      out.result(JSON.stringify(result, null, 2));
      return result;
    }
    const shown = path.relative(context.cwd, dest) || '.';
    out.done(`example ${name}: ${files.length} file${files.length === 1 ? '' : 's'} (${formatBytes(size)} downloaded) in ${shown}`);
    out.result(`Example ${name} is in ${shown}. Next:`);
    out.result();
    out.result(`  cd ${/^[\w./][\w./-]*$/.test(shown) ? shown : shellQuote(shown)} && svc serve app.py`);
    out.result();
    out.result(`README.md says what it shows and how to call it.`);
    return result;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

type DestinationState = 'missing' | 'empty' | 'not-empty';

async function destinationState(dest: string): Promise<DestinationState> {
  const found = await lstat(dest).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (found === null) return 'missing';
  if (!found.isDirectory()) {
    throw new SvcError(
      'conflict',
      `${dest} exists and is not a folder${found.isSymbolicLink() ? ' (it is a link)' : ''}; svc example download writes into a new folder.`,
      {
        hint: 'Choose another folder with --dir.',
        details: { dir: dest },
      },
    );
  }
  return (await readdir(dest)).length === 0 ? 'empty' : 'not-empty';
}

/**
 * Reads the whole archive once before extracting it: an example holds files
 * and folders only, so any link (symbolic or hard), device or other entry
 * refuses the download. (The extractor then refuses absolute paths, `..`,
 * duplicates and oversized archives.)
 */
async function assertPlainEntries(archive: string, name: string): Promise<void> {
  const refuse = (entry: string, why: string) =>
    new SvcError(
      'bundle_invalid',
      `refused the example ${name}: entry ${JSON.stringify(entry)} ${why}; an example holds only files and folders.`,
      {
        hint: 'Nothing was written. The server sent an archive svc does not make; tell its operator.',
        details: { entry, rule: 'unsupported_type' },
      },
    );
  let entries = 0;
  const hooks = {
    entry: async (header: TarHeader) => {
      if (++entries > EXAMPLE_LIMITS.maxEntries)
        throw new SvcError('bundle_too_large', `refused the example ${name}: it holds more than ${EXAMPLE_LIMITS.maxEntries} entries.`);
      if (header.type === 'symlink') throw refuse(header.path, `is a symbolic link (to ${JSON.stringify(header.linkpath)})`);
      if (header.type === 'hardlink') throw refuse(header.path, `is a hard link (to ${JSON.stringify(header.linkpath)})`);
      if (header.type !== 'file' && header.type !== 'directory') throw refuse(header.path, `is a ${header.type.replace('-', ' ')}`);
      return null;
    },
  };
  const input = createReadStream(archive);
  const gunzip = createGunzip();
  input.on('error', (error) => gunzip.destroy(error));
  input.pipe(gunzip);
  // Headers and padding add a little to the files' sizes; a gzip bomb stops here, before it is unpacked.
  const most = EXAMPLE_LIMITS.maxTotalBytes + 16 * 1024 * 1024;
  let unpacked = 0;
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const chunk of gunzip) {
      unpacked += (chunk as Buffer).length;
      if (unpacked > most) throw tooLarge(name, unpacked);
      yield chunk as Buffer;
    }
  }
  try {
    await readTar(counted(), hooks);
  } catch (error) {
    if (error instanceof SvcError) throw error;
    const why = error instanceof TarFormatError ? error.message : `the gzip data is damaged (${(error as Error).message})`;
    throw new SvcError('bundle_invalid', `refused the example ${name}: ${why}.`, {
      hint: 'Nothing was written. The download was damaged or cut short: run the command again.',
      details: {
        entry: error instanceof TarFormatError ? error.entry : null,
        rule: error instanceof TarFormatError ? error.rule : 'corrupt',
      },
    });
  } finally {
    input.destroy();
    gunzip.destroy();
  }
}

/** Extracts the archive into `dest`; returns the files written, relative and sorted. */
async function install(archive: string, dest: string, state: DestinationState): Promise<string[]> {
  if (state !== 'not-empty') {
    // The extractor writes a temporary sibling and renames it into place: `dest` appears whole or not at all.
    if (state === 'empty') await rmdir(dest);
    let result;
    try {
      result = await extractBundle(archive, dest, EXAMPLE_LIMITS);
    } catch (error) {
      if (state === 'empty') await mkdir(dest, { recursive: true }).catch(() => undefined); // leave the folder as it was
      throw error;
    }
    if (result.reused) {
      throw new SvcError('conflict', `${dest} appeared while the example was downloaded; nothing was written.`, {
        hint: 'Run the command again, or choose another folder with --dir.',
      });
    }
    return listFiles(dest);
  }
  // --force into a folder that has files: extract beside it (same file system), then move each file in.
  const staging = path.join(path.dirname(dest), `.${path.basename(dest)}.svc-example-${randomBytes(4).toString('hex')}`);
  try {
    await extractBundle(archive, staging, EXAMPLE_LIMITS);
    const files = await listFiles(staging);
    for (const file of files) await assertWritable(dest, file);
    for (const file of files) {
      await mkdir(path.dirname(path.join(dest, file)), { recursive: true });
      await rename(path.join(staging, file), path.join(dest, file));
    }
    return files;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * `file` (relative) may be written under `dest`: no folder on its way is a
 * link or a file, and the file itself, when it exists, is a file or a link
 * (which `rename` replaces without following), never a folder.
 */
async function assertWritable(dest: string, file: string): Promise<void> {
  const parts = file.split('/');
  for (let depth = 1; depth <= parts.length; depth++) {
    const where = path.join(dest, ...parts.slice(0, depth));
    const found = await lstat(where).catch(() => null);
    if (found === null) return;
    const last = depth === parts.length;
    if (!last && !found.isDirectory()) {
      throw new SvcError(
        'conflict',
        `cannot write ${file} into ${dest}: ${path.join(...parts.slice(0, depth))} is ${found.isSymbolicLink() ? 'a link' : 'not a folder'} there; nothing was written.`,
        {
          hint: 'Choose another folder with --dir.',
        },
      );
    }
    if (last && found.isDirectory()) {
      throw new SvcError('conflict', `cannot write ${file} into ${dest}: it is a folder there; nothing was written.`, {
        hint: 'Choose another folder with --dir.',
      });
    }
  }
}

/** Every file under `dir`, relative with `/`, sorted. */
async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) files.push(...(await listFiles(dir, relative)));
    else files.push(relative);
  }
  return files.sort();
}

function tooLarge(name: string, bytes: number): SvcError {
  return new SvcError(
    'bundle_too_large',
    `refused the example ${name}: it is ${formatBytes(bytes)}, more than the ${formatBytes(EXAMPLE_LIMITS.maxTotalBytes)} an example may be.`,
    {
      hint: 'Nothing was written. The server sent more than an example project; tell its operator.',
    },
  );
}
