/**
 * The volume the model-class example's workers load their lexicons from, as its script fills it
 * (`lexicons.put_dir(models/)`): for tests that deploy the example without running the script first.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { examplesRoot } from '../../core/model/paths.js';

export async function fillLexiconsVolume(url: string, token: string): Promise<void> {
  const owner = { Authorization: `Bearer ${token}` };
  const volumes = `${url}/api/v1/volumes`;
  const made = await fetch(volumes, {
    method: 'POST',
    headers: { ...owner, 'Content-Type': 'application/json' },
    body: '{"name":"lexicons"}',
  });
  assert.ok(made.status === 201 || made.status === 409, `the volume lexicons: ${made.status}`);
  for (const file of ['basic.json', 'strict.json']) {
    const put = await fetch(`${volumes}/lexicons/files?path=${file}`, {
      method: 'PUT',
      headers: { ...owner, 'Content-Type': 'application/octet-stream' },
      body: readFileSync(path.join(examplesRoot, 'model-class', 'models', file)),
    });
    assert.equal(put.status, 201, `lexicons/${file}`);
  }
}
