import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/load.js';
import { problemsOf } from './config-files.js';

describe('loadConfig(): what installs images (imageInstaller, imageBytecode, uvPath)', () => {
  it('compiles bytecode in the background unless SVC_IMAGE_BYTECODE says build; refuses anything else', () => {
    assert.equal(loadConfig({ env: {} }).imageBytecode, 'background');
    assert.equal(loadConfig({ env: { SVC_IMAGE_BYTECODE: 'build' } }).imageBytecode, 'build');
    const problems = problemsOf(() => loadConfig({ env: { SVC_IMAGE_BYTECODE: 'never' } }));
    assert.ok(
      problems.some((p) => p.includes('SVC_IMAGE_BYTECODE') && p.includes('expected one of "background", "build", got "never"')),
      problems.join('\n'),
    );
  });

  it('defaults to auto and the uv svc brings; reads both from SVC_IMAGE_INSTALLER and SVC_UV', () => {
    const config = loadConfig({ env: {} });
    assert.deepEqual([config.imageInstaller, config.uvPath], ['auto', null]);
    const uv = path.join(mkdtempSync(path.join(os.tmpdir(), 'svc-uv-')), 'uv');
    writeFileSync(uv, '#!/bin/sh\n');
    chmodSync(uv, 0o755);
    const given = loadConfig({ env: { SVC_IMAGE_INSTALLER: ' pip ', SVC_UV: uv } });
    assert.deepEqual([given.imageInstaller, given.uvPath], ['pip', uv]);
  });

  it('names each bad value and what it should be, and starts nothing', () => {
    const missing = path.join(os.tmpdir(), 'svc-no-such-uv', 'uv');
    const problems = problemsOf(() => loadConfig({ env: { SVC_IMAGE_INSTALLER: 'conda', SVC_UV: missing } }));
    assert.ok(
      problems.some((p) => p.includes('SVC_IMAGE_INSTALLER') && p.includes('expected one of "auto", "uv", "pip", got "conda"')),
      problems.join('\n'),
    );
    assert.ok(
      problems.some((p) => p.includes('SVC_UV') && p.includes(`${missing} is not a file on this machine (it should be a uv binary)`)),
      problems.join('\n'),
    );
  });
});
