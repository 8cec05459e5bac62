import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { readPipConfig, uvSettingsFrom } from '../../../../core/infra/images/pip-settings.js';
import { tempDir } from '../../../helpers/config.js';

const python = process.env.SVC_PYTHON ?? 'python3';

describe("uv takes pip's settings", function () {
  this.timeout(30_000);

  it('reads pip.conf and PIP_* as pip does (the environment over [install] over [global]) and turns them into uv flags', async () => {
    const dir = tempDir('svc-pip-conf-');
    const conf = path.join(dir, 'pip.conf');
    writeFileSync(
      conf,
      [
        '[global]',
        'index-url = https://alice:s3cret@pypi.example.com/simple',
        'extra-index-url = https://extra-one.example.com/simple https://extra-two.example.com/simple',
        'trusted-host = pypi.example.com',
        'cert = /etc/ssl/example.pem',
        '[install]',
        'find-links = /srv/wheels',
        '',
      ].join('\n'),
    );
    // Only this file and these variables: none of the machine's own PIP_* settings.
    const env = { PATH: process.env.PATH, HOME: dir, PIP_CONFIG_FILE: conf, PIP_NO_INDEX: 'true', PIP_DEFAULT_TIMEOUT: '42.5' };
    const config = await readPipConfig(python, env);
    const settings = uvSettingsFrom(config, env);
    assert.deepEqual(settings.args, [
      '--index-url',
      'https://alice:s3cret@pypi.example.com/simple',
      '--extra-index-url',
      'https://extra-one.example.com/simple',
      '--extra-index-url',
      'https://extra-two.example.com/simple',
      '--find-links',
      '/srv/wheels',
      '--no-index',
      '--allow-insecure-host',
      'pypi.example.com',
    ]);
    assert.deepEqual(settings.env, { SSL_CERT_FILE: '/etc/ssl/example.pem', UV_HTTP_TIMEOUT: '43' });
    const said = settings.described.join(', ');
    assert.match(said, /index-url https:\/\/\*\*\*@pypi\.example\.com\/simple/);
    assert.doesNotMatch(said, /s3cret/, 'the build log never shows the index password');
  });

  it("leaves pip's index settings out when uv's own variables choose the index, and never overrides SSL_CERT_FILE", () => {
    const config = {
      ':env:.index-url': 'https://pip.example.com/simple',
      'global.cert': '/etc/pip.pem',
      'global.find-links': '/srv/wheels',
    };
    for (const uvVariable of ['UV_INDEX_URL', 'UV_DEFAULT_INDEX', 'UV_FIND_LINKS', 'UV_NO_INDEX']) {
      const settings = uvSettingsFrom(config, { [uvVariable]: 'set', SSL_CERT_FILE: '/etc/own.pem' });
      assert.deepEqual([settings.args, settings.env], [[], {}], uvVariable);
    }
    assert.deepEqual(uvSettingsFrom({}, {}), { args: [], env: {}, described: [] }, 'no settings: uv uses its own defaults');
  });
});
