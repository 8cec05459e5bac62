import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { loadConfig } from '../../config/load.js';
import { SVC_VERSION, svcServerJob } from '../../jobs/svc-server.js';
import type { NomadJob, Task, TaskGroup } from '../../jobs/types.js';
import { validateJob } from '../../jobs/validate.js';

const goldenFile = path.join(packageRoot, 'jobs', 'svc-server.nomad.json');
const update = process.env.SVC_UPDATE_GOLDEN === '1';
const group = (job: NomadJob): TaskGroup => job.TaskGroups[0]!;
const task = (job: NomadJob): Task => group(job).Tasks[0]!;

describe('svcServerJob()', () => {
  it('passes validateJob with the defaults and with every option', () => {
    assert.deepEqual(validateJob(svcServerJob()), []);
    const all = svcServerJob({
      replicas: 5,
      port: 8080,
      driver: 'docker',
      version: '1.2.3',
      jobId: 'svc-eu',
      serviceName: 'svc-eu',
      datacenters: ['eu-1', 'eu-2'],
      region: 'eu',
      namespace: 'platform',
      nomadAddr: 'https://nomad.service.consul:4646',
      consulAddr: 'http://127.0.0.1:8500',
      secrets: 'none',
      publicUrl: 'https://svc.example.com',
      baseDomain: 'svc.example.com',
      proxyTags: false,
      cpu: 2000,
      memoryMB: 2048,
    });
    assert.deepEqual(validateJob(all), []);
  });

  it('runs options.replicas gateway replicas, 2 by default, as a rolling deploy', () => {
    assert.equal(group(svcServerJob().Job).Count, 2);
    assert.equal(group(svcServerJob({ replicas: 4 }).Job).Count, 4);
    const g = group(svcServerJob().Job);
    assert.equal(g.Name, 'gateway');
    assert.equal(g.Update?.MaxParallel, 1);
    assert.equal(g.Update?.HealthCheck, 'checks');
    assert.equal(g.Update?.AutoRevert, true);
    assert.equal(g.Scaling, undefined, 'no Scaling block: operators scale the gateway by hand');
    assert.throws(() => svcServerJob({ replicas: -1 }), /replicas/);
  });

  it('takes a dynamic http port by default and a static one with options.port', () => {
    assert.deepEqual(group(svcServerJob().Job).Networks, [{ Mode: 'host', DynamicPorts: [{ Label: 'http', Value: 0 }] }]);
    assert.deepEqual(group(svcServerJob({ port: 7420 }).Job).Networks, [{ Mode: 'host', ReservedPorts: [{ Label: 'http', Value: 7420 }] }]);
  });

  it('registers the Consul service svc with HTTP checks on /_svc/health (restarts) and /_svc/ready (routing) and catch-all routing tags', () => {
    const [service] = task(svcServerJob().Job).Services!;
    assert.equal(service!.Name, 'svc');
    assert.equal(service!.PortLabel, 'http');
    assert.equal(service!.Provider, 'consul');
    assert.deepEqual(
      service!.Checks!.map((c) => [c.Type, c.Path, c.PortLabel, c.CheckRestart !== undefined]),
      [
        ['http', '/_svc/health', 'http', true],
        ['http', '/_svc/ready', 'http', false],
      ],
    );
    // Standbys fail /_svc/ready by design: it must not decide health in the job's rolling deployments.
    assert.deepEqual(
      service!.Checks!.map((c) => c.OnUpdate),
      [undefined, 'ignore'],
    );
    assert.ok(service!.Tags!.includes('urlprefix-/'));
    assert.ok(service!.Tags!.includes('traefik.http.routers.svc.rule=PathPrefix(`/`)'));
    const [quiet] = task(svcServerJob({ proxyTags: false }).Job).Services!;
    assert.deepEqual(quiet!.Tags, ['svc', 'svc-gateway']);
  });

  it('runs svc with the Nomad scheduler and Consul KV, on a shared data dir when given', () => {
    const env = task(svcServerJob().Job).Env!;
    assert.deepEqual(
      [env.SVC_SCHEDULER, env.SVC_STATE, env.SVC_NOMAD_DRIVER, env.SVC_DATA_DIR],
      ['nomad', 'consul', 'exec', '${NOMAD_ALLOC_DIR}/data/svc'],
    );
    assert.equal(
      env.SVC_ADVERTISE_URL,
      'http://${NOMAD_ADDR_http}',
      "each replica advertises its own address: followers forward the API to the leader's",
    );
    assert.equal(task(svcServerJob({ dataDir: '/mnt/svc', workloadDriver: 'exec' }).Job).Env!.SVC_DATA_DIR, '/mnt/svc');
    assert.equal(task(svcServerJob({ dataDir: '/mnt/svc', workloadDriver: 'exec' }).Job).Env!.SVC_NOMAD_DRIVER, 'exec');
  });

  it('runs `svc server` on 0.0.0.0 and the http port, by raw_exec or docker', () => {
    const raw = task(svcServerJob().Job);
    assert.equal(raw.Driver, 'raw_exec');
    assert.deepEqual(raw.Config, {
      command: '/usr/bin/node',
      args: ['/opt/svc/dist/cli/index.js', 'server', '--host', '0.0.0.0', '--port', '${NOMAD_PORT_http}'],
    });
    const docker = task(svcServerJob({ driver: 'docker', version: '9.9.9' }).Job);
    assert.equal(docker.Config.image, 'svc:9.9.9');
    assert.deepEqual(docker.Config.ports, ['http']);
  });

  it('points svc at the local Nomad and Consul agents and keeps tokens out of the job', () => {
    const job = svcServerJob({ publicUrl: 'https://svc.example.com' }).Job;
    const env = task(job).Env!;
    assert.equal(env.NOMAD_ADDR, 'http://${attr.unique.network.ip-address}:4646');
    assert.equal(env.CONSUL_HTTP_ADDR, 'http://${attr.unique.network.ip-address}:8500');
    assert.equal(env.SVC_PUBLIC_URL, 'https://svc.example.com');
    assert.ok(!Object.keys(env).some((key) => key.endsWith('TOKEN')));
    const templates = (task(job) as Task & { Templates?: { EmbeddedTmpl: string; Envvars: boolean }[] }).Templates!;
    assert.match(templates[0]!.EmbeddedTmpl, /nomadVar "nomad\/jobs\/svc"/);
    assert.equal(templates[0]!.Envvars, true);
    assert.deepEqual(
      job.UI?.Links?.map((l) => l.Label),
      ['svc', 'API'],
    );
    assert.equal(job.Meta?.svc_version, SVC_VERSION);
  });

  it('with workloadDriver docker: passes the image registry and base, and the push password from the Variable, never in Env', () => {
    const job = svcServerJob({
      workloadDriver: 'docker',
      imageRegistry: 'registry.example.com:5000/svc',
      imageBase: 'registry.example.com:5000/base/python:{python}',
      imagePlatform: 'linux/arm64',
      imageRegistryUsername: 'svc-builder',
    }).Job;
    assert.deepEqual(validateJob({ Job: job }), []);
    const env = task(job).Env!;
    assert.equal(env.SVC_NOMAD_DRIVER, 'docker');
    assert.equal(env.SVC_IMAGE_REGISTRY, 'registry.example.com:5000/svc');
    assert.equal(env.SVC_IMAGE_BASE, 'registry.example.com:5000/base/python:{python}');
    assert.equal(env.SVC_IMAGE_REGISTRY_USERNAME, 'svc-builder');
    assert.equal(env.SVC_IMAGE_PLATFORM, 'linux/arm64');
    assert.ok(!Object.keys(env).some((key) => key.endsWith('PASSWORD')));
    // The password is a file of its own, not an env line: `#` or quotes in it would be cut or misread there.
    assert.equal(env.SVC_IMAGE_REGISTRY_PASSWORD_FILE, '${NOMAD_SECRETS_DIR}/image-registry-password');
    const templates = (task(job) as Task & { Templates?: { EmbeddedTmpl: string; DestPath: string; Perms?: string; Envvars?: boolean }[] })
      .Templates!;
    assert.doesNotMatch(templates[0]!.EmbeddedTmpl, /password/);
    const password = templates.find((t) => t.DestPath === 'secrets/image-registry-password')!;
    assert.deepEqual(
      [password.EmbeddedTmpl, password.Perms, password.Envvars],
      ['{{ with nomadVar "nomad/jobs/svc" }}{{ .image_registry_password }}{{ end }}', '0400', undefined],
    );
    // Without an account, no password file.
    const anonymous = svcServerJob({ workloadDriver: 'docker', imageRegistry: 'registry.example.com/svc' }).Job;
    assert.ok(!(task(anonymous).Templates ?? []).some((t) => t.DestPath === 'secrets/image-registry-password'));
    assert.equal(task(anonymous).Env!.SVC_IMAGE_REGISTRY_PASSWORD_FILE, undefined);
    assert.throws(() => svcServerJob({ workloadDriver: 'docker' }), /needs imageRegistry/);
  });

  it('gives every replica the same secrets key, from the Variable into a file (SVC_SECRETS_KEY_FILE), never in Env', () => {
    const job = svcServerJob().Job;
    const key = task(job).Templates!.find((t) => t.DestPath === 'secrets/secrets-key')!;
    assert.deepEqual(
      [key.EmbeddedTmpl, key.Perms, key.Envvars],
      ['{{ with nomadVar "nomad/jobs/svc" }}{{ .secrets_key }}{{ end }}', '0400', undefined],
    );
    assert.equal(task(job).Env!.SVC_SECRETS_KEY_FILE, '${NOMAD_SECRETS_DIR}/secrets-key');
    assert.equal(task(svcServerJob({ secrets: 'none' }).Job).Env!.SVC_SECRETS_KEY_FILE, undefined);
    assert.deepEqual(validateJob({ Job: job }), []);
  });

  it('is what jobs/svc-server.nomad.json holds (SVC_UPDATE_GOLDEN=1 rewrites it)', () => {
    const text = `${JSON.stringify(svcServerJob(), null, 2)}\n`;
    if (update) writeFileSync(goldenFile, text);
    assert.ok(existsSync(goldenFile), 'jobs/svc-server.nomad.json is missing: run the test with SVC_UPDATE_GOLDEN=1');
    assert.equal(
      readFileSync(goldenFile, 'utf8'),
      text,
      'jobs/svc-server.nomad.json differs from svcServerJob() (SVC_UPDATE_GOLDEN=1 rewrites it; then read the diff)',
    );
  });

  it('ships config/svc-cluster.json, which loadConfig accepts (only keys config/schema.ts knows)', () => {
    const config = loadConfig({ file: path.join(packageRoot, 'config', 'svc-cluster.json'), env: {} });
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.publicUrl, 'https://svc.example.com');
  });
});
