import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/load.js';
import { configFile, problemsOf } from './config-files.js';

const NOMAD_DOCKER = { SVC_SCHEDULER: 'nomad', SVC_NOMAD_DRIVER: 'docker' };

describe("loadConfig(): image registry settings (Nomad's docker driver)", () => {
  it('defaults: no registry, python:{python}-slim for linux/amd64, no account', () => {
    const config = loadConfig({ env: {} });
    assert.deepEqual(
      [config.imageRegistry, config.imageBase, config.imagePlatform, config.imageRegistryUsername, config.imageRegistryPassword],
      [null, 'python:{python}-slim', 'linux/amd64', null, null],
    );
  });

  it('reads each key from the environment', () => {
    const config = loadConfig({
      env: {
        ...NOMAD_DOCKER,
        SVC_IMAGE_REGISTRY: ' registry.example.com:5000/svc/ ',
        SVC_IMAGE_BASE: 'registry.example.com/base/python:{python}-bookworm',
        SVC_IMAGE_PLATFORM: 'linux/arm64',
        SVC_IMAGE_REGISTRY_USERNAME: 'pusher',
        SVC_IMAGE_REGISTRY_PASSWORD: 'push-secret',
      },
    });
    assert.deepEqual(
      [config.imageRegistry, config.imageBase, config.imagePlatform, config.imageRegistryUsername, config.imageRegistryPassword],
      ['registry.example.com:5000/svc', 'registry.example.com/base/python:{python}-bookworm', 'linux/arm64', 'pusher', 'push-secret'],
    );
  });

  it('reads every key but the password from a config file, the password from the environment; the environment wins', () => {
    const file = configFile({
      scheduler: 'nomad',
      nomadDriver: 'docker',
      imageRegistry: 'http://10.0.0.5:5000',
      imageBase: 'python:{python}',
      imagePlatform: 'linux/arm64',
      imageRegistryUsername: 'from-file',
    });
    const config = loadConfig({ env: { SVC_IMAGE_REGISTRY_PASSWORD: 'secret' }, file });
    assert.deepEqual(
      [config.imageRegistry, config.imageBase, config.imagePlatform, config.imageRegistryUsername, config.imageRegistryPassword],
      ['http://10.0.0.5:5000', 'python:{python}', 'linux/arm64', 'from-file', 'secret'],
    );
    const overridden = loadConfig({
      env: { SVC_IMAGE_REGISTRY_PASSWORD: 'secret', SVC_IMAGE_REGISTRY: 'localhost:5000', SVC_IMAGE_REGISTRY_USERNAME: 'from-env' },
      file,
    });
    assert.equal(overridden.imageRegistry, 'localhost:5000');
    assert.equal(overridden.imageRegistryUsername, 'from-env');
  });

  it('refuses bad values, each with where it came from and what is wrong', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          SVC_IMAGE_REGISTRY: 'http://docker.io/someone',
          SVC_IMAGE_BASE: 'Python:{python}',
          SVC_IMAGE_PLATFORM: 'linux/386',
        },
      }),
    );
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.match(problems.find((p) => p.startsWith('SVC_IMAGE_REGISTRY:'))!, /Docker Hub answers over https only/);
    assert.match(problems.find((p) => p.startsWith('SVC_IMAGE_BASE'))!, /the repository "library\/Python" must be lowercase/);
    assert.match(
      problems.find((p) => p.startsWith('SVC_IMAGE_PLATFORM'))!,
      /expected one of "linux\/amd64", "linux\/arm64", got "linux\/386"/,
    );

    const fromFile = problemsOf(() =>
      loadConfig({
        env: {},
        file: configFile({
          imageRegistry: 'registry.example.com/Team',
          imageBase: 'python:{python}@sha256:abc',
          imagePlatform: 'amd64',
          imageRegistryUsername: '',
        }),
      }),
    );
    assert.equal(fromFile.length, 4, fromFile.join('\n'));
    assert.match(fromFile.find((p) => p.includes(': imageRegistry:'))!, /the repository prefix "Team" must be lowercase/);
    assert.match(fromFile.find((p) => p.includes(': imageBase:'))!, /the digest "sha256:abc"/);
    assert.match(fromFile.find((p) => p.includes(': imagePlatform:'))!, /expected one of "linux\/amd64", "linux\/arm64"/);
    assert.match(fromFile.find((p) => p.includes(': imageRegistryUsername:'))!, /expected a non-empty string/);
    const notString = problemsOf(() => loadConfig({ env: {}, file: configFile({ imageRegistry: 5000 }) }));
    assert.match(notString.join('\n'), /imageRegistry: expected a registry such as registry\.example\.com:5000\/svc, got 5000/);
  });

  it('nomadDriver docker with scheduler nomad needs imageRegistry; the other drivers and the local scheduler do not', () => {
    const problems = problemsOf(() => loadConfig({ env: NOMAD_DOCKER }));
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /nomadDriver "docker" needs imageRegistry \(SVC_IMAGE_REGISTRY\)/);
    assert.equal(loadConfig({ env: { SVC_SCHEDULER: 'nomad', SVC_NOMAD_DRIVER: 'raw_exec' } }).imageRegistry, null);
    assert.equal(loadConfig({ env: { SVC_NOMAD_DRIVER: 'docker' } }).nomadDriver, 'docker', 'the local scheduler ignores the driver');
    assert.equal(loadConfig({ env: { ...NOMAD_DOCKER, SVC_IMAGE_REGISTRY: '127.0.0.1:5000' } }).imageRegistry, '127.0.0.1:5000');
  });

  it('a username without a password (or the reverse) is refused: they go together', () => {
    const noPassword = problemsOf(() => loadConfig({ env: { SVC_IMAGE_REGISTRY_USERNAME: 'pusher' } }));
    assert.equal(noPassword.length, 1, noPassword.join('\n'));
    assert.match(noPassword[0]!, /imageRegistryUsername and imageRegistryPassword \(SVC_IMAGE_REGISTRY_PASSWORD\) go together/);
    const noUser = problemsOf(() => loadConfig({ env: { SVC_IMAGE_REGISTRY_PASSWORD: 'secret' } }));
    assert.match(noUser.join('\n'), /go together/);
  });

  it('refuses the password in a config file (a secret), naming the variable to use instead', () => {
    const problems = problemsOf(() =>
      loadConfig({ env: {}, file: configFile({ imageRegistryUsername: 'pusher', imageRegistryPassword: 'push-secret' }) }),
    );
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(
      problems[0]!,
      /imageRegistryPassword: a password does not belong in a config file; set SVC_IMAGE_REGISTRY_PASSWORD in svc's environment instead/,
    );
  });

  it('reads the password from SVC_IMAGE_REGISTRY_PASSWORD_FILE as written (#, quotes and spaces kept, one line end dropped); the variable itself wins', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-password-'));
    const file = path.join(dir, 'password');
    writeFileSync(file, 'p#ss "w\'rd" x\n');
    const config = loadConfig({ env: { SVC_IMAGE_REGISTRY_USERNAME: 'pusher', SVC_IMAGE_REGISTRY_PASSWORD_FILE: file } });
    assert.equal(config.imageRegistryPassword, 'p#ss "w\'rd" x');
    assert.equal(
      loadConfig({
        env: { SVC_IMAGE_REGISTRY_USERNAME: 'pusher', SVC_IMAGE_REGISTRY_PASSWORD_FILE: file, SVC_IMAGE_REGISTRY_PASSWORD: 'direct' },
      }).imageRegistryPassword,
      'direct',
    );
    const missing = problemsOf(() =>
      loadConfig({ env: { SVC_IMAGE_REGISTRY_USERNAME: 'pusher', SVC_IMAGE_REGISTRY_PASSWORD_FILE: path.join(dir, 'nope') } }),
    );
    assert.match(missing.join('\n'), /SVC_IMAGE_REGISTRY_PASSWORD_FILE: cannot read .*nope \(ENOENT\)/);
  });

  it('takes a password as written, spaces included, and refuses an empty one only', () => {
    const config = loadConfig({ env: { SVC_IMAGE_REGISTRY_USERNAME: 'pusher', SVC_IMAGE_REGISTRY_PASSWORD: ' two words ' } });
    assert.equal(config.imageRegistryPassword, ' two words ');
    const problems = problemsOf(() => loadConfig({ env: {}, flags: { imageRegistryUsername: 'pusher', imageRegistryPassword: '' } }));
    assert.match(problems.join('\n'), /expected a password or access token, not an empty value/);
  });
});
