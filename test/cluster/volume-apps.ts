/**
 * The two apps of test/fixtures/volume-mounts as both volume suites run them against the volume
 * `shared`: a seed file put through the API, the writer app writing note.txt through its mount, the
 * reader app reading it back through a read-only one (its own write refused).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { deployTo, type SvcServer } from './svc-process.js';

const fixtures = path.join(packageRoot, 'test', 'fixtures', 'volume-mounts');

/** Puts the seed, deploys both apps (their URLs into `urls`), writes `text` with the writer and checks the reader sees it. */
export async function writeThroughApps(server: SvcServer, urls: Record<string, string>, text: string): Promise<void> {
  const bearer = { Authorization: `Bearer ${server.ownerToken}` };
  const seeded = await fetch(`${server.url}/api/v1/volumes/shared/files?path=seed.txt`, {
    method: 'PUT',
    headers: { ...bearer, 'Content-Type': 'application/octet-stream' },
    body: 'seeded',
  });
  assert.equal(seeded.status, 201, await seeded.text());
  await deployTo(server, path.join(fixtures, 'writer.py'), urls);
  await deployTo(server, path.join(fixtures, 'reader.py'), urls);
  const written = await fetch(urls['vol-writer/write']!, {
    method: 'POST',
    headers: { ...bearer, 'Content-Type': 'application/json' },
    body: JSON.stringify({ text }),
  });
  assert.equal(written.status, 200, await written.clone().text());
  assert.deepEqual(((await written.json()) as { listed: string[] }).listed, ['note.txt', 'seed.txt']);
  assert.deepEqual(await (await fetch(urls['vol-reader/read']!, { headers: bearer })).json(), { text, write: 'Read-only file system' });
}
