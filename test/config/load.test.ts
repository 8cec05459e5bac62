import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/load.js';
import { DEFAULT_PORT } from '../../config/schema.js';
import { configFile, problemsOf } from './config-files.js';

describe('loadConfig()', () => {
  it('uses the documented defaults', () => {
    const config = loadConfig({ env: {} });
    assert.equal(config.port, DEFAULT_PORT);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.dataDir, path.join(os.homedir(), '.svc', 'data'));
    assert.equal(config.cacheDir, path.join(os.homedir(), '.svc', 'cache'));
  });

  it('prefers flags over SVC_* variables over the file', () => {
    const file = configFile({ port: 1111, host: '0.0.0.0', python: 'python3.11' });
    const config = loadConfig({ file, env: { SVC_PORT: '2222', SVC_HOST: '::1' }, flags: { port: '3333' } });
    assert.equal(config.port, 3333);
    assert.equal(config.host, '::1');
    assert.equal(config.python, 'python3.11');
  });

  it('reports every bad value at once, naming where it came from', () => {
    const file = configFile({ port: 'eighty', colour: true });
    const problems = problemsOf(() => loadConfig({ file, env: { SVC_PUBLIC_URL: 'ftp://x' }, flags: { dataDir: '' } }));
    assert.equal(problems.length, 4, problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('--data-dir:')));
    assert.ok(problems.some((p) => p.startsWith('SVC_PUBLIC_URL:')));
    assert.ok(problems.some((p) => p.includes(': port:') && p.includes('0 to 65535')));
    assert.ok(problems.some((p) => p.includes('unknown key "colour"')));
  });

  it('refuses private callback addresses unless callbackAllowPrivate (SVC_CALLBACK_ALLOW_PRIVATE) says otherwise', () => {
    assert.equal(loadConfig({ env: {} }).callbackAllowPrivate, false);
    assert.equal(loadConfig({ env: { SVC_CALLBACK_ALLOW_PRIVATE: 'true' } }).callbackAllowPrivate, true);
    assert.equal(loadConfig({ file: configFile({ callbackAllowPrivate: true }), env: {} }).callbackAllowPrivate, true);
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_CALLBACK_ALLOW_PRIVATE: 'maybe' } }))[0]!,
      /SVC_CALLBACK_ALLOW_PRIVATE.*true or false/,
    );
  });

  it('takes per-workspace quotas from the file and names the workspace and key of a bad one', () => {
    assert.deepEqual(loadConfig({ env: {} }).workspaceQuotas, {});
    const quotas = { '*': { containers: 4 }, acme: { cpu: 2.5, memoryMiB: 4096, gpus: 2 } };
    assert.deepEqual(loadConfig({ env: {}, file: configFile({ workspaceQuotas: quotas }) }).workspaceQuotas, quotas);
    const bad = (workspaceQuotas: unknown) => problemsOf(() => loadConfig({ env: {}, file: configFile({ workspaceQuotas }) }))[0]!;
    assert.match(bad([]), /workspaceQuotas: expected an object from workspace name .* to \{"containers", "cpu", "memoryMiB", "gpus"\}/);
    assert.match(bad({ acme: 3 }), /the quota of "acme" is not an object of containers, cpu, memoryMiB, gpus/);
    assert.match(
      bad({ ml_team: { gpus: 1 } }),
      /"ml_team" is no workspace name \(.*\); use "\*" for every workspace the table does not name/,
    );
    assert.match(bad({ acme: { tpus: 1 } }), /the quota of "acme" has "tpus": it takes containers, cpu, memoryMiB, gpus/);
    assert.match(bad({ acme: { gpus: 0.5 } }), /the quota of "acme".gpus must be a whole number, 0 or more, got 0.5/);
    assert.match(bad({ acme: { containers: 1.5 } }), /the quota of "acme".containers must be a whole number, 0 or more, got 1.5/);
    assert.match(bad({ acme: { cpu: -1 } }), /the quota of "acme".cpu must be a number of cores, 0 or more, got -1/);
  });

  it('takes usage prices from the file, or none, and names what is wrong with bad ones', () => {
    assert.equal(loadConfig({ env: {} }).usagePrices, null);
    const prices = { currency: 'USD', cpuSecond: 0.0000131, memoryGiBSecond: 0.0000022 };
    assert.deepEqual(loadConfig({ env: {}, file: configFile({ usagePrices: prices }) }).usagePrices, prices);
    const bad = (usagePrices: unknown) => problemsOf(() => loadConfig({ env: {}, file: configFile({ usagePrices }) }))[0]!;
    assert.match(bad({ cpuSecond: 1 }), /currency must be a three-letter ISO 4217 code such as "USD", got undefined/);
    assert.match(bad({ currency: 'usd', cpuSecond: 1 }), /three-letter ISO 4217 code/);
    assert.match(
      bad({ currency: 'USD', tpuSecond: 1 }),
      /"tpuSecond" is not a price: it takes currency, cpuSecond, memoryGiBSecond, gpuSecond/,
    );
    assert.match(bad({ currency: 'USD', cpuSecond: -1 }), /cpuSecond must be a price per unit, 0 or more, got -1/);
    assert.match(bad({ currency: 'USD' }), /give at least one of cpuSecond, memoryGiBSecond, gpuSecond/);
  });

  it('takes a body limit in bytes and refuses tiny or non-numeric ones', () => {
    assert.equal(loadConfig({ env: { SVC_MAX_BODY_BYTES: '1048576' } }).maxBodyBytes, 1048576);
    assert.match(problemsOf(() => loadConfig({ env: { SVC_MAX_BODY_BYTES: '10' } }))[0]!, /at least 1024/);
    assert.match(problemsOf(() => loadConfig({ env: { SVC_MAX_BODY_BYTES: '1MB' } }))[0]!, /whole number of bytes/);
  });

  it('takes a cgroup root only where a folder is (a typo would turn the limits off quietly), and null for none', () => {
    assert.equal(loadConfig({ env: {} }).cgroupRoot, null);
    assert.equal(loadConfig({ env: {}, file: configFile({ cgroupRoot: null }) }).cgroupRoot, null);
    assert.equal(loadConfig({ env: { SVC_CGROUP_ROOT: '/proc' } }).cgroupRoot, '/proc');
    assert.match(
      problemsOf(() => loadConfig({ env: { SVC_CGROUP_ROOT: '/sys/fs/cgroupz' } }))[0]!,
      /^SVC_CGROUP_ROOT: \/sys\/fs\/cgroupz is not a folder on this machine/,
    );
    assert.match(
      problemsOf(() => loadConfig({ env: {}, file: configFile({ cgroupRoot: 7 }) }))[0]!,
      /expected a folder path or null, got 7/,
    );
  });

  it('takes a base domain as a DNS name, lower-cased, and refuses URLs, ports and bad labels', () => {
    assert.equal(loadConfig({ env: {} }).baseDomain, null);
    assert.equal(loadConfig({ env: { SVC_BASE_DOMAIN: 'Svc.Example.com.' } }).baseDomain, 'svc.example.com');
    assert.equal(loadConfig({ env: {}, file: configFile({ baseDomain: 'localhost' }) }).baseDomain, 'localhost');
    for (const bad of [
      'https://svc.example.com',
      'svc.example.com:8080',
      'svc..example.com',
      '-svc.example.com',
      'svc_x.example.com',
      'a/b',
    ]) {
      assert.match(problemsOf(() => loadConfig({ env: { SVC_BASE_DOMAIN: bad } }))[0]!, /^SVC_BASE_DOMAIN: expected a DNS name/, bad);
    }
    assert.match(problemsOf(() => loadConfig({ env: {}, file: configFile({ baseDomain: 42 }) }))[0]!, /baseDomain: expected a DNS name/);
  });

  it('takes a queue timeout in seconds within 0.1..3600 and a scaling policy name', () => {
    assert.equal(loadConfig({ env: {} }).queueTimeoutSeconds, 30);
    assert.equal(loadConfig({ env: { SVC_QUEUE_TIMEOUT: '2.5' } }).queueTimeoutSeconds, 2.5);
    assert.equal(loadConfig({ env: {}, file: configFile({ queueTimeoutSeconds: 120 }) }).queueTimeoutSeconds, 120);
    for (const bad of ['0', '5000', '10s', '-1']) {
      assert.match(problemsOf(() => loadConfig({ env: { SVC_QUEUE_TIMEOUT: bad } }))[0]!, /seconds from 0.1 to 3600/, bad);
    }
    assert.equal(loadConfig({ env: {} }).scalingPolicy, 'queue-depth');
    assert.equal(loadConfig({ env: { SVC_SCALING_POLICY: 'acme-burst' } }).scalingPolicy, 'acme-burst');
  });

  it('takes a metrics listener as ip:port (port 0 picks one), and null for none', () => {
    assert.equal(loadConfig({ env: {} }).metricsAddress, null);
    assert.equal(loadConfig({ env: { SVC_METRICS_ADDRESS: '127.0.0.1:9464' } }).metricsAddress, '127.0.0.1:9464');
    assert.equal(loadConfig({ env: {}, file: configFile({ metricsAddress: '[::1]:0' }) }).metricsAddress, '[::1]:0');
    for (const bad of ['localhost:9464', '127.0.0.1', ':9464', '127.0.0.1:70000', 'http://127.0.0.1:9464', '999.1.1.1:80']) {
      assert.match(
        problemsOf(() => loadConfig({ env: { SVC_METRICS_ADDRESS: bad } }))[0]!,
        /SVC_METRICS_ADDRESS.*expected an address to listen on as ip:port/,
        bad,
      );
    }
    // The DNS resolver's port must name a server: 0 stays refused there.
    assert.match(problemsOf(() => loadConfig({ env: { SVC_DNS_RESOLVER: '127.0.0.1:0' } }))[0]!, /expected a DNS server as ip:port/);
  });

  it('rejects out-of-range ports', () => {
    assert.match(problemsOf(() => loadConfig({ env: { SVC_PORT: '70000' } }))[0]!, /0 to 65535/);
  });

  it('resolves relative paths in a file from the file, and in flags from the current folder', () => {
    const file = configFile({ dataDir: 'state', plugins: ['./audit.js', 'svc-plugin-x', { module: '../p.js', options: { a: 1 } }] });
    const dir = path.dirname(file);
    const config = loadConfig({ file, env: {}, cwd: '/somewhere' });
    assert.equal(config.dataDir, path.join(dir, 'state'));
    assert.deepEqual(config.plugins, [
      path.join(dir, 'audit.js'),
      'svc-plugin-x',
      { module: path.resolve(dir, '../p.js'), options: { a: 1 } },
    ]);
    assert.equal(loadConfig({ env: {}, cwd: '/somewhere', flags: { dataDir: 'd' } }).dataDir, '/somewhere/d');
  });

  it('says clearly when the file is missing or not JSON', () => {
    assert.match(problemsOf(() => loadConfig({ file: '/nonexistent/svc.json', env: {} }))[0]!, /cannot read the config file/);
    assert.match(problemsOf(() => loadConfig({ file: configFile('{ nope'), env: {} }))[0]!, /not valid JSON/);
  });
});
