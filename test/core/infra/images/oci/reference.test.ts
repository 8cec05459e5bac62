import assert from 'node:assert/strict';
import { SvcError } from '../../../../../core/model/errors.js';
import { parseImageReference, parseRegistryTarget, pinnedReference } from '../../../../../core/infra/images/oci/reference.js';

const DIGEST = `sha256:${'ab'.repeat(32)}`;

/** The config_invalid error parseImageReference throws for `text`. */
function refused(text: string): SvcError {
  try {
    parseImageReference(text);
  } catch (error) {
    assert.ok(error instanceof SvcError, String(error));
    assert.equal(error.code, 'config_invalid');
    return error;
  }
  assert.fail(`expected ${JSON.stringify(text)} to be refused`);
}

describe("parseImageReference(): Docker's rules", () => {
  it('puts a one-component name on Docker Hub under library/, with the API at registry-1.docker.io', () => {
    assert.deepEqual(parseImageReference('python:3.11-slim'), {
      host: 'docker.io',
      origin: 'https://registry-1.docker.io',
      repository: 'library/python',
      tag: '3.11-slim',
      digest: null,
    });
  });

  it('reads index.docker.io and registry-1.docker.io as Docker Hub', () => {
    for (const text of ['index.docker.io/library/python:3.11', 'registry-1.docker.io/library/python:3.11', 'index.docker.io/python:3.11']) {
      const parsed = parseImageReference(text);
      assert.deepEqual(
        [parsed.host, parsed.origin, parsed.repository],
        ['docker.io', 'https://registry-1.docker.io', 'library/python'],
        text,
      );
    }
  });

  it("keeps a user's repository on Docker Hub as it is, and docker.io written out means the same", () => {
    assert.deepEqual(parseImageReference('someone/tool:1'), {
      host: 'docker.io',
      origin: 'https://registry-1.docker.io',
      repository: 'someone/tool',
      tag: '1',
      digest: null,
    });
    assert.deepEqual(parseImageReference('docker.io/python:3.12'), parseImageReference('python:3.12'));
  });

  it('reads the first component as a registry host when it has a port, a dot or is localhost; loopback hosts are plain http', () => {
    assert.deepEqual(parseImageReference('localhost:5000/a/b:t'), {
      host: 'localhost:5000',
      origin: 'http://localhost:5000',
      repository: 'a/b',
      tag: 't',
      digest: null,
    });
    assert.deepEqual(parseImageReference('localhost/a'), {
      host: 'localhost',
      origin: 'http://localhost',
      repository: 'a',
      tag: 'latest',
      digest: null,
    });
    assert.equal(parseImageReference('127.0.0.1:5000/base/python:3.11').origin, 'http://127.0.0.1:5000');
    assert.equal(parseImageReference('[::1]:5000/base/python:3.11').origin, 'http://[::1]:5000');
    assert.deepEqual(parseImageReference('registry.example.com/base/python:3.11'), {
      host: 'registry.example.com',
      origin: 'https://registry.example.com',
      repository: 'base/python',
      tag: '3.11',
      digest: null,
    });
  });

  it('a first component without dot, port or localhost is a Docker Hub namespace, not a host', () => {
    const ref = parseImageReference('host/a');
    assert.equal(ref.host, 'docker.io');
    assert.equal(ref.repository, 'host/a');
  });

  it('takes a digest, with or without a tag; a digest alone has no tag', () => {
    assert.deepEqual(parseImageReference(`registry.example.com/a@${DIGEST}`), {
      host: 'registry.example.com',
      origin: 'https://registry.example.com',
      repository: 'a',
      tag: null,
      digest: DIGEST,
    });
    const both = parseImageReference(`localhost:5000/a:1.0@${DIGEST}`);
    assert.deepEqual([both.host, both.repository, both.tag, both.digest], ['localhost:5000', 'a', '1.0', DIGEST]);
  });

  it('defaults the tag to latest', () => {
    assert.equal(parseImageReference('python').tag, 'latest');
    assert.equal(parseImageReference('localhost:5000/a/b').tag, 'latest');
  });

  it('refuses a bad tag, a bad digest and an uppercase repository, naming the part that is wrong', () => {
    assert.match(refused('python:-slim').message, /the tag "-slim" is not a valid tag/);
    assert.match(refused(`python:${'x'.repeat(129)}`).message, /the tag "x{129}" is not a valid tag/);
    assert.match(refused('python@sha256:abc').message, /the digest "sha256:abc" is not sha256:<64 lowercase hex digits>/);
    assert.match(refused(`python@sha256:${'AB'.repeat(32)}`).message, /the digest/);
    assert.match(refused(`python@md5:${'ab'.repeat(16)}`).message, /the digest "md5:/);
    assert.match(refused('Python:3.11').message, /the repository "library\/Python" must be lowercase/);
    assert.match(refused('localhost:5000/Team/app').message, /the repository "Team\/app" must be lowercase/);
    assert.match(refused('localhost:5000/a//b').message, /the repository "a\/\/b"/);
    const error = refused('python:bad tag');
    assert.match(error.message, /^"python:bad tag" is not an image reference/);
    assert.match(error.hint ?? '', /python:3\.11-slim/);
  });
});

describe('parseRegistryTarget(): where svc pushes', () => {
  it('takes host[:port][/prefix] without a scheme as https, but http for loopback hosts', () => {
    assert.deepEqual(parseRegistryTarget('registry.example.com:5000/svc'), {
      host: 'registry.example.com:5000',
      origin: 'https://registry.example.com:5000',
      prefix: 'svc',
    });
    assert.deepEqual(parseRegistryTarget('127.0.0.1:5000'), { host: '127.0.0.1:5000', origin: 'http://127.0.0.1:5000', prefix: '' });
    assert.deepEqual(parseRegistryTarget('localhost:5000/teams/ml/'), {
      host: 'localhost:5000',
      origin: 'http://localhost:5000',
      prefix: 'teams/ml',
    });
    assert.deepEqual(parseRegistryTarget('[::1]:5000/svc'), { host: '[::1]:5000', origin: 'http://[::1]:5000', prefix: 'svc' });
  });

  it('keeps an explicit scheme: http:// for a registry without TLS, https:// even on loopback', () => {
    assert.deepEqual(parseRegistryTarget('http://10.0.0.5:5000'), { host: '10.0.0.5:5000', origin: 'http://10.0.0.5:5000', prefix: '' });
    assert.deepEqual(parseRegistryTarget('https://localhost:5000/svc'), {
      host: 'localhost:5000',
      origin: 'https://localhost:5000',
      prefix: 'svc',
    });
  });

  it('sends Docker Hub to its API host, and refuses it over http', () => {
    assert.deepEqual(parseRegistryTarget('docker.io/someone'), {
      host: 'docker.io',
      origin: 'https://registry-1.docker.io',
      prefix: 'someone',
    });
    assert.deepEqual(parseRegistryTarget('http://docker.io/someone'), { problem: 'Docker Hub answers over https only' });
  });

  it('checks the prefix against the repository grammar and the host against host[:port]', () => {
    const upper = parseRegistryTarget('registry.example.com/SVC');
    assert.ok('problem' in upper);
    assert.match(upper.problem, /the repository prefix "SVC" must be lowercase/);
    const host = parseRegistryTarget('user@registry.example.com/svc');
    assert.ok('problem' in host);
    assert.match(host.problem, /"user@registry\.example\.com" is not a registry host\[:port\]/);
    for (const text of [
      '',
      'ftp://registry.example.com',
      'https://',
      'registry.example.com/a b',
      'registry.example.com:99999/svc',
      'registry.example.com:0',
    ]) {
      const result = parseRegistryTarget(text);
      assert.ok('problem' in result, `${JSON.stringify(text)} should be refused`);
    }
  });

  it('pins an image by digest under the registry host', () => {
    const target = parseRegistryTarget('localhost:5000/svc');
    assert.ok(!('problem' in target));
    assert.equal(pinnedReference(target, 'svc/img-1', DIGEST), `localhost:5000/svc/img-1@${DIGEST}`);
    // What the builder pins must read back as the same image.
    const back = parseImageReference(pinnedReference(target, 'svc/img-1', DIGEST));
    assert.deepEqual([back.host, back.repository, back.digest, back.tag], ['localhost:5000', 'svc/img-1', DIGEST, null]);
  });
});
