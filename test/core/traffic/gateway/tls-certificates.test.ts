import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SvcError } from '../../../../core/model/errors.js';
import { Certificates } from '../../../../core/traffic/gateway/tls/certificates.js';
import { tempDir } from '../../../helpers/config.js';
import { makeCertificate } from '../../../helpers/tls.js';

/** The problems `Certificates.open` reports as config_invalid. */
function openProblems(sources: Parameters<typeof Certificates.open>[0]): string[] {
  try {
    Certificates.open(sources);
  } catch (error) {
    assert.ok(error instanceof SvcError);
    assert.equal(error.code, 'config_invalid');
    return (error.details as { problems: string[] }).problems;
  }
  assert.fail('expected config_invalid');
}

describe('Certificates.open()', function () {
  this.timeout(30_000);
  let dir: string;
  let main: { cert: string; key: string };
  let other: { cert: string; key: string };

  before(async () => {
    dir = tempDir('svc-certs-');
    main = await makeCertificate(dir, 'main', ['svc.example.test']);
    other = await makeCertificate(dir, 'other', ['other.example.test']);
  });

  it('serves a good pair and says which names each certificate covers', async () => {
    const sites = tempDir('svc-sites-');
    await makeCertificate(sites, 'api', ['api.example.test', 'www.example.test']);
    const certificates = Certificates.open({ ...main, dir: sites });
    assert.match(
      certificates.summary(),
      /^TLS: default certificate .*main\.crt \(svc\.example\.test, valid to .*\); 1 from .* for api\.example\.test, www\.example\.test$/,
    );
  });

  it('lists every problem at once, each naming its file: unreadable, not PEM, a key of another certificate, half pairs (hidden files ignored)', () => {
    const sites = tempDir('svc-sites-');
    writeFileSync(path.join(sites, 'broken.crt'), 'not a certificate');
    copyFileSync(other.key, path.join(sites, 'broken.key'));
    copyFileSync(main.cert, path.join(sites, 'wrongkey.crt'));
    copyFileSync(other.key, path.join(sites, 'wrongkey.key'));
    copyFileSync(main.cert, path.join(sites, 'lonely.crt'));
    copyFileSync(main.key, path.join(sites, 'orphan.key'));
    // Hidden: a tool's new file before its rename, not yet a certificate of the folder.
    copyFileSync(main.cert, path.join(sites, '.new.crt'));
    const problems = openProblems({ cert: path.join(dir, 'missing.crt'), key: main.key, dir: sites });
    assert.match(problems[0]!, new RegExp(`^cannot read the certificate ${path.join(dir, 'missing.crt')} \\(ENOENT\\)`));
    assert.match(problems[1]!, new RegExp(`^${path.join(sites, 'broken.crt')} is not a PEM certificate`));
    assert.equal(problems[2], `${path.join(sites, 'lonely.crt')} has no private key beside it (lonely.key)`);
    assert.equal(problems[3], `${path.join(sites, 'orphan.key')} has no certificate beside it (orphan.crt)`);
    assert.equal(
      problems[4],
      `${path.join(sites, 'wrongkey.key')} is not the private key of the certificate in ${path.join(sites, 'wrongkey.crt')}`,
    );
    assert.equal(problems.length, 5);
  });

  it('refuses a private key file that holds no key', () => {
    const bad = path.join(tempDir('svc-certs-'), 'bad.key');
    writeFileSync(bad, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');
    assert.match(
      openProblems({ cert: main.cert, key: bad, dir: null })[0]!,
      new RegExp(`^${bad} is not a PEM private key, or it is encrypted`),
    );
  });
});
