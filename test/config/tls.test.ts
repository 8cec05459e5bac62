import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../config/load.js';
import { tempDir } from '../helpers/config.js';
import { configFile, problemsOf } from './config-files.js';

/** Files that exist (their content is checked when the platform starts, not here). */
function files(): { dir: string; cert: string; key: string } {
  const dir = tempDir('svc-tls-config-');
  const cert = path.join(dir, 'default.crt');
  const key = path.join(dir, 'default.key');
  writeFileSync(cert, '');
  writeFileSync(key, '');
  return { dir, cert, key };
}

describe('loadConfig(): TLS keys', () => {
  it('has TLS off by default: no certificate, no plain listener, no redirect', () => {
    const config = loadConfig({ env: {} });
    assert.deepEqual(
      [config.tlsCert, config.tlsKey, config.tlsCertDir, config.httpPort, config.httpsRedirect, config.trustProxy],
      [null, null, null, null, false, false],
    );
    assert.equal(loadConfig({ env: { SVC_TRUST_PROXY: 'true' } }).trustProxy, true);
  });

  it('reads every key from SVC_* variables, and paths in a file relative to the file', () => {
    const { dir, cert, key } = files();
    const config = loadConfig({
      env: { SVC_TLS_CERT: cert, SVC_TLS_KEY: key, SVC_TLS_CERT_DIR: dir, SVC_HTTP_PORT: '8080', SVC_HTTPS_REDIRECT: 'true' },
    });
    assert.deepEqual(
      [config.tlsCert, config.tlsKey, config.tlsCertDir, config.httpPort, config.httpsRedirect],
      [cert, key, dir, 8080, true],
    );
    const file = path.join(dir, 'svc.json');
    writeFileSync(
      file,
      JSON.stringify({ tlsCert: 'default.crt', tlsKey: './default.key', tlsCertDir: '.', httpPort: 0, httpsRedirect: false }),
    );
    const fromFile = loadConfig({ env: {}, file });
    assert.deepEqual(
      [fromFile.tlsCert, fromFile.tlsKey, fromFile.tlsCertDir, fromFile.httpPort, fromFile.httpsRedirect],
      [cert, key, dir, 0, false],
    );
  });

  it('names a certificate path that is no file, and a folder that is none', () => {
    const { dir } = files();
    const problems = problemsOf(() =>
      loadConfig({ env: { SVC_TLS_CERT: path.join(dir, 'nope.crt'), SVC_TLS_KEY: dir, SVC_TLS_CERT_DIR: path.join(dir, 'none') } }),
    );
    assert.deepEqual(problems, [
      `SVC_TLS_CERT: ${path.join(dir, 'nope.crt')} is not a file on this machine (it should be a PEM certificate file)`,
      `SVC_TLS_KEY: ${dir} is not a file on this machine (it should be a PEM private key file)`,
      `SVC_TLS_CERT_DIR: ${path.join(dir, 'none')} is not a folder on this machine (it should be a folder of <name>.crt and <name>.key files)`,
    ]);
  });

  it('refuses keys that do not fit together, saying what each needs', () => {
    const { dir, cert, key } = files();
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_TLS_CERT: cert } }))[0]!,
      /^tlsCert \(SVC_TLS_CERT\) and tlsKey \(SVC_TLS_KEY\) go together/,
    );
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_TLS_CERT_DIR: dir } }))[0]!,
      /^tlsCertDir \(SVC_TLS_CERT_DIR\) needs tlsCert and tlsKey/,
    );
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_HTTP_PORT: '80' } }))[0]!,
      /^httpPort \(SVC_HTTP_PORT\) is the plain-HTTP listener beside HTTPS: it needs tlsCert and tlsKey/,
    );
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_TLS_CERT: cert, SVC_TLS_KEY: key, SVC_HTTPS_REDIRECT: '1' } }))[0]!,
      /^httpsRedirect \(SVC_HTTPS_REDIRECT\) needs httpPort/,
    );
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_TLS_CERT: cert, SVC_TLS_KEY: key, SVC_PORT: '8443', SVC_HTTP_PORT: '8443' } }))[0]!,
      /^httpPort and port are both 8443/,
    );
  });

  it('refuses ACME keys that cannot work: no tlsCertDir or httpPort, a contact that is no email, options without the directory', () => {
    const { dir, cert, key } = files();
    const tls = { SVC_TLS_CERT: cert, SVC_TLS_KEY: key };
    assert.match(
      problemsOf(() => loadConfig({ env: { ...tls, SVC_ACME_DIRECTORY: 'https://acme.example.com/dir' } }))[0]!,
      /^acmeDirectory \(SVC_ACME_DIRECTORY\) needs tlsCertDir .* and httpPort/,
    );
    const full = { ...tls, SVC_TLS_CERT_DIR: dir, SVC_HTTP_PORT: '80', SVC_ACME_DIRECTORY: 'https://acme.example.com/dir' };
    assert.match(
      problemsOf(() => loadConfig({ env: { ...full, SVC_ACME_EMAIL: 'ops' } }))[0]!,
      /^acmeEmail \(SVC_ACME_EMAIL\) must be an email address such as ops@example.com, not "ops"/,
    );
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_ACME_EMAIL: 'ops@example.com' } }))[0]!,
      /^acmeEmail \(SVC_ACME_EMAIL\) and acmeCa \(SVC_ACME_CA\) belong to acmeDirectory/,
    );
    assert.deepEqual(
      problemsOf(() => loadConfig({ env: { ...full, SVC_ACME_DIRECTORY: 'acme.example.com' } })),
      ['SVC_ACME_DIRECTORY: expected an http(s) URL such as https://svc.example.com, got "acme.example.com"'],
    );
    const config = loadConfig({ env: { ...full, SVC_ACME_EMAIL: 'ops@example.com' } });
    assert.deepEqual([config.acmeDirectory, config.acmeEmail, config.acmeCa], ['https://acme.example.com/dir', 'ops@example.com', null]);
  });

  it('takes true/false (or 1/0) for httpsRedirect and a port or null for httpPort', () => {
    assert.deepEqual(
      problemsOf(() => loadConfig({ env: { SVC_HTTPS_REDIRECT: 'yes', SVC_HTTP_PORT: '70000' } })),
      [
        'SVC_HTTP_PORT: port must be a whole number from 0 to 65535 (0 picks a free port), got "70000"',
        'SVC_HTTPS_REDIRECT: expected true or false, got "yes"',
      ],
    );
    assert.equal(loadConfig({ env: {}, file: configFile({ httpPort: null, httpsRedirect: false }) }).httpPort, null);
  });
});
