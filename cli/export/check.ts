/**
 * `svc app export --check`: what differs between the client on disk and the
 * one the deployed app would give now, without writing anything — for CI,
 * which fails when the checked-in client no longer matches the deployment.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ExportedFiles } from '../../core/infra/plugin/types.js';
import { RECORD_FILE } from './record.js';

/** One line per difference (`svc_clients/quickstart/_models.py differs`), none when the client is current. */
export async function clientDifferences(outDir: string, generated: ExportedFiles): Promise<string[]> {
  const differences: string[] = [];
  const wanted = new Map(generated.files.map((file) => [file.path, file.contents]));
  for (const [file, contents] of wanted) {
    const existing = await readFile(path.join(outDir, ...file.split('/')), 'utf8').catch(() => null);
    if (existing === null) differences.push(`${file} is missing`);
    else if (existing !== contents) differences.push(`${file} differs`);
  }
  for (const file of await filesUnder(path.join(outDir, ...generated.root.split('/')), generated.root)) {
    if (!wanted.has(file)) differences.push(`${file} is not part of the client any more`);
  }
  return differences;
}

/** Every file below `dir` as `<prefix>/<relative path>`, the export's record and Python's caches aside. */
async function filesUnder(dir: string, prefix: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    if (entry.name === '__pycache__' || entry.name === RECORD_FILE) continue;
    if (entry.isDirectory()) found.push(...(await filesUnder(path.join(dir, entry.name), `${prefix}/${entry.name}`)));
    else found.push(`${prefix}/${entry.name}`);
  }
  return found;
}
