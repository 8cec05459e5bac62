import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { errorBody, errorCodes, SvcError, toSvcError, type ErrorCode } from '../../../core/model/errors.js';
import { packageRoot } from '../../../core/model/paths.js';

/** Rows of the table in docs/errors.md: code → HTTP status. */
function documentedCodes(): Map<string, number> {
  const text = readFileSync(path.join(packageRoot, 'docs', 'errors.md'), 'utf8');
  const rows = new Map<string, number>();
  for (const match of text.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)) rows.set(match[1]!, Number(match[2]));
  return rows;
}

describe('errorCodes', () => {
  it('documents every code in docs/errors.md with its HTTP status', () => {
    const documented = documentedCodes();
    for (const [code, info] of Object.entries(errorCodes)) {
      assert.ok(documented.has(code), `docs/errors.md has no row for ${code}`);
      assert.equal(documented.get(code), info.status, `docs/errors.md gives ${code} another status`);
    }
  });

  it('documents no code that does not exist', () => {
    for (const code of documentedCodes().keys()) assert.ok(code in errorCodes, `docs/errors.md lists unknown code ${code}`);
  });

  it('holds every code the Python runtime answers with, with the same status', () => {
    const source = readFileSync(path.join(packageRoot, 'sdk', 'python', 'svc', 'runtime', '_errors.py'), 'utf8');
    const table = source.slice(source.indexOf('ERROR_CODES'), source.indexOf('}', source.indexOf('ERROR_CODES')));
    const pythonCodes = [...table.matchAll(/"([a-z_]+)": (\d{3})/g)].map((m) => [m[1]!, Number(m[2])] as const);
    assert.ok(pythonCodes.length >= 3, 'the runtime declares its codes in ERROR_CODES');
    for (const [code, status] of pythonCodes) {
      assert.ok(code in errorCodes, `runtime code ${code} is missing from core/model/errors.ts`);
      assert.equal(errorCodes[code as ErrorCode].status, status, `runtime code ${code} has another status than core/model/errors.ts`);
    }
  });
});

describe('errorBody()', () => {
  it('shapes an error as {"error": {"code", "message"}} with the hint', () => {
    const error = new SvcError('queue_full', 'the queue is full', { hint: 'retry later' });
    assert.deepEqual(errorBody(error), { error: { code: 'queue_full', message: 'the queue is full', hint: 'retry later' } });
    assert.equal(error.status, 429);
  });

  it('hides the message of internal errors', () => {
    const error = toSvcError(new TypeError('secret detail'));
    assert.equal(error.code satisfies ErrorCode, 'internal');
    assert.deepEqual(errorBody(error), { error: { code: 'internal', message: 'internal error' } });
  });

  it('keeps an SvcError as it is', () => {
    const error = new SvcError('not_found', 'gone');
    assert.equal(toSvcError(error), error);
  });
});
