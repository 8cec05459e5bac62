/** Config files and config_invalid problems, for the config loader's tests. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { SvcError } from '../../core/model/errors.js';
import { tempDir } from '../helpers/config.js';

/** A config file holding `content` (JSON, or the text as it is), in a folder of its own. */
export function configFile(content: unknown): string {
  const file = path.join(tempDir('svc-config-'), 'svc.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** The problems `fn` reports as config_invalid (fails when it does not throw that). */
export function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SvcError);
    assert.equal(error.code, 'config_invalid');
    return (error.details as { problems?: string[] } | undefined)?.problems ?? [error.message];
  }
  assert.fail('expected config_invalid');
}
