import assert from 'node:assert/strict';
import { loadConfig } from '../../config/load.js';
import { configFile, problemsOf } from './config-files.js';

describe('loadConfig(): cluster settings', () => {
  it('defaults to the embedded backends, so a config without cluster keys runs on one machine', () => {
    const config = loadConfig({ env: {} });
    assert.deepEqual(
      [
        config.scheduler,
        config.registry,
        config.state,
        config.nomadAddr,
        config.nomadDriver,
        config.consulAddr,
        config.consulPrefix,
        config.nomadToken,
        config.consulToken,
      ],
      ['local', 'embedded', 'file', 'http://127.0.0.1:4646', 'exec', 'http://127.0.0.1:8500', 'svc/', null, null],
    );
    assert.deepEqual(config.nomadDatacenters, ['dc1']);
  });

  it('reads a cluster config file; the registry follows the scheduler unless set', () => {
    const config = loadConfig({
      env: {},
      file: configFile({
        scheduler: 'nomad',
        state: 'consul',
        nomadDatacenters: ['dc1', 'dc2'],
        mhzPerCore: 2400,
        cpuMode: 'cores',
        proxyTags: 'none',
        consulPrefix: 'teams/ml/svc/',
      }),
    });
    assert.equal(config.registry, 'consul');
    assert.deepEqual(config.nomadDatacenters, ['dc1', 'dc2']);
    assert.deepEqual([config.mhzPerCore, config.cpuMode, config.proxyTags, config.consulPrefix], [2400, 'cores', 'none', 'teams/ml/svc/']);
  });

  it('takes SVC_* variables first, then NOMAD_ADDR/NOMAD_TOKEN/CONSUL_HTTP_ADDR/CONSUL_HTTP_TOKEN as the HashiCorp CLIs do', () => {
    const hashicorp = loadConfig({
      env: {
        NOMAD_ADDR: 'https://nomad.internal:4646/',
        NOMAD_TOKEN: 'n-secret',
        CONSUL_HTTP_ADDR: '10.0.0.5:8500',
        CONSUL_HTTP_TOKEN: 'c-secret',
        SVC_NOMAD_DATACENTERS: 'eu1, eu2',
      },
    });
    assert.equal(hashicorp.nomadAddr, 'https://nomad.internal:4646');
    assert.equal(hashicorp.nomadToken, 'n-secret');
    assert.equal(hashicorp.consulAddr, 'http://10.0.0.5:8500', "host:port without a scheme is http, as Consul's CLI takes it");
    assert.equal(hashicorp.consulToken, 'c-secret');
    assert.deepEqual(hashicorp.nomadDatacenters, ['eu1', 'eu2']);
    const ours = loadConfig({
      env: { NOMAD_ADDR: 'http://a:4646', SVC_NOMAD_ADDR: 'http://b:4646', NOMAD_TOKEN: 'theirs', SVC_NOMAD_TOKEN: 'ours' },
    });
    assert.equal(ours.nomadAddr, 'http://b:4646');
    assert.equal(ours.nomadToken, 'ours');
  });

  it('reads advertiseUrl (SVC_ADVERTISE_URL): the address the other replicas reach this one at, refused unless an http(s) URL', () => {
    assert.equal(loadConfig({ env: {} }).advertiseUrl, null, 'default: the address svc listens on');
    assert.equal(loadConfig({ env: { SVC_ADVERTISE_URL: 'http://10.0.0.7:24312/' } }).advertiseUrl, 'http://10.0.0.7:24312');
    assert.equal(
      loadConfig({ env: {}, file: configFile({ advertiseUrl: 'https://svc-2.internal' }) }).advertiseUrl,
      'https://svc-2.internal',
    );
    const problems = problemsOf(() => loadConfig({ env: { SVC_ADVERTISE_URL: '10.0.0.7:24312' } }));
    assert.match(problems.join('\n'), /SVC_ADVERTISE_URL.*expected an http\(s\) URL with no path/);
    const withPath = problemsOf(() => loadConfig({ env: {}, file: configFile({ advertiseUrl: 'http://10.0.0.7:24312/svc' }) }));
    assert.match(
      withPath.join('\n'),
      /advertiseUrl.*with no path.*"http:\/\/10\.0\.0\.7:24312\/svc"/,
      'only the origin is used: a path is refused, not dropped',
    );
  });

  it('refuses a token in a config file, naming the variables to use instead, and keeps going to report the rest', () => {
    const problems = problemsOf(() =>
      loadConfig({ env: {}, file: configFile({ nomadToken: 'abc', consulToken: 'def', scheduler: 'kubernetes' }) }),
    );
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.match(
      problems.find((p) => p.includes('nomadToken'))!,
      /does not belong in a config file; set SVC_NOMAD_TOKEN \(or NOMAD_TOKEN\)/,
    );
    assert.match(problems.find((p) => p.includes('consulToken'))!, /SVC_CONSUL_TOKEN \(or CONSUL_HTTP_TOKEN\)/);
    assert.match(problems.find((p) => p.includes('scheduler'))!, /expected one of "local", "nomad", got "kubernetes"/);
  });

  it('refuses bad values, each with where it came from', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          SVC_NOMAD_ADDR: 'nomad:4646/v1',
          SVC_MHZ_PER_CORE: '12.5',
          SVC_NOMAD_DATACENTERS: 'dc1,,dc2',
          SVC_CONSUL_PREFIX: '/svc',
          SVC_PROXY_TAGS: 'some',
        },
      }),
    );
    assert.equal(problems.length, 5, problems.join('\n'));
    assert.match(problems.find((p) => p.startsWith('SVC_NOMAD_ADDR'))!, /agent address such as http:\/\/127\.0\.0\.1:4646/);
    assert.match(problems.find((p) => p.startsWith('SVC_MHZ_PER_CORE'))!, /whole MHz per core from 100 to 100000/);
    assert.match(problems.find((p) => p.startsWith('SVC_NOMAD_DATACENTERS'))!, /non-empty list of names/);
    assert.match(problems.find((p) => p.startsWith('SVC_CONSUL_PREFIX'))!, /ending in \//);
    assert.match(problems.find((p) => p.startsWith('SVC_PROXY_TAGS'))!, /"public", "all", "none"/);
  });

  it('refuses combinations that cannot work, saying why', () => {
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_SCHEDULER: 'nomad', SVC_REGISTRY: 'embedded' } }))[0]!,
      /scheduler "nomad" needs registry "consul"/,
    );
    assert.match(problemsOf(() => loadConfig({ env: { SVC_REGISTRY: 'consul' } }))[0]!, /registry "consul" needs scheduler "nomad"/);
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_SCHEDULER: 'nomad', SVC_NOMAD_DRIVER: 'docker' } }))[0]!,
      /nomadDriver "docker" needs imageRegistry/,
    );
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_SCHEDULER: 'nomad', SVC_NOMAD_DRIVER: 'raw_exec', SVC_NOMAD_CSI_PLUGIN: 'ebs' } }))[0]!,
      /nomadCsiPlugin needs nomadDriver "exec" or "docker": raw_exec tasks have no file system of their own/,
    );
    assert.equal(loadConfig({ env: { SVC_SCHEDULER: 'nomad', SVC_NOMAD_CSI_PLUGIN: 'ebs' } }).nomadCsiPlugin, 'ebs');
    // Consul KV works with local containers too (one machine whose state lives in Consul).
    assert.equal(loadConfig({ env: { SVC_STATE: 'consul' } }).state, 'consul');
  });

  it("reads a CSI plugin's creation parameters from the file (an object) or the environment (JSON), refusing any other shape", () => {
    assert.deepEqual(loadConfig({ env: {} }).nomadCsiParameters, []);
    assert.deepEqual(
      loadConfig({ env: {}, file: configFile({ nomadCsiParameters: { type: 'gp3', 'csi.storage.k8s.io/fstype': 'ext4' } }) })
        .nomadCsiParameters,
      [
        ['type', 'gp3'],
        ['csi.storage.k8s.io/fstype', 'ext4'],
      ],
    );
    assert.deepEqual(loadConfig({ env: { SVC_NOMAD_CSI_PARAMETERS: '{"pool": "ssd, fast"}' } }).nomadCsiParameters, [
      ['pool', 'ssd, fast'],
    ]);
    // A parameter may have any name, "problem" too (the config loader's word for a refusal).
    assert.deepEqual(loadConfig({ env: { SVC_NOMAD_CSI_PARAMETERS: '{"problem": "none"}' } }).nomadCsiParameters, [['problem', 'none']]);
    for (const [value, shown] of [
      ['type=gp3', '"type=gp3"'],
      ['["gp3"]', String.raw`"[\"gp3\"]"`],
      ['{"size": 3}', String.raw`"{\"size\": 3}"`],
      ['{"": "x"}', String.raw`"{\"\": \"x\"}"`],
    ]) {
      const [problem] = problemsOf(() => loadConfig({ env: { SVC_NOMAD_CSI_PARAMETERS: value } }));
      assert.match(problem!, /SVC_NOMAD_CSI_PARAMETERS/, value);
      assert.ok(
        problem!.includes(
          `expected an object of at most 64 names and their text values, such as {"type": "gp3"} (JSON in the environment), got ${shown}`,
        ),
        problem,
      );
    }
  });
});
