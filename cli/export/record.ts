/**
 * What `svc app export` wrote into an app's client folder, kept beside the
 * files (`.svc-export.json`: each file's sha256), so that the next export
 * can tell a file nobody touched (replaced) from one someone edited after
 * the export (never overwritten silently) — the header alone cannot.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export const RECORD_FILE = '.svc-export.json';

export interface ExportRecord {
  /** Path relative to the app's client folder, `/` separators → sha256 of what was written. */
  readonly files: Readonly<Record<string, string>>;
}

export function sha256(contents: string): string {
  return createHash('sha256').update(contents).digest('hex');
}

/** The record's text for the files written under the root (paths relative to it). */
export function recordText(files: readonly { readonly path: string; readonly contents: string }[]): string {
  const record: ExportRecord = { files: Object.fromEntries(files.map((file) => [file.path, sha256(file.contents)])) };
  return `${JSON.stringify({ generatedBy: 'svc app export', ...record }, null, 2)}\n`;
}

/** The record of an earlier export in `rootDir`; null when there is none or it is not one (then only headers tell). */
export async function readRecord(rootDir: string): Promise<ExportRecord | null> {
  let text: string;
  try {
    text = await readFile(path.join(rootDir, RECORD_FILE), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = JSON.parse(text) as { files?: unknown };
    const files = parsed.files;
    if (typeof files !== 'object' || files === null || Array.isArray(files)) return null;
    if (!Object.values(files).every((hash) => typeof hash === 'string')) return null;
    return { files: files as Record<string, string> };
  } catch {
    return null;
  }
}
