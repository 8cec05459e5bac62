/**
 * Nomad's docker driver end to end, on the stand-ins: with `nomadDriver:
 * docker`, svc builds each workload's image without a Docker engine (a base
 * image with Python from one registry, svc's layers built here), pushes it
 * to the configured registry with credentials, and compiles a docker task
 * pinned to the image's digest; the Nomad stand-in pulls that image, unpacks
 * it and runs the task chrooted in it, so the answer below comes from the
 * svc runtime and packages inside the image, not from this machine's Python.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { examplesRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient } from '../core/http/api/client.js';
import { testCacheDir } from '../helpers/config.js';
import { pythonBaseImageLayout } from '../fixtures/python-base-image.js';
import { startRegistryStandin, TOKEN_SERVICE, type RegistryStandin } from '../standins/registry/index.js';
import { deployClusterApp, getJson, nomadJson, startStandins, svcJobs, uploadProject, type Standins } from './cluster-helpers.js';

describe("svc server with Nomad's docker driver (stand-ins: Nomad, Consul, two registries)", function () {
  this.timeout(300_000);
  let standins: Standins;
  /** Where svc pushes (and Nomad pulls): token auth, pushes need the account, pulls are anonymous. */
  let registry: RegistryStandin;
  /** Where the base image is, like Docker Hub: anonymous pulls, blobs redirected to storage. */
  let hub: RegistryStandin;
  let platform: Platform;
  const reports: unknown[] = [];
  let firstRepository = '';

  before(async () => {
    registry = await startRegistryStandin({ auth: { mode: 'token', users: { pusher: 'push-secret' }, anonymousPull: true } });
    hub = await startRegistryStandin({ auth: { mode: 'token', users: {}, anonymousPull: true }, redirectBlobs: true });
    await hub.importLayout(await pythonBaseImageLayout(testCacheDir), 'library/python', '3.11-slim');
    standins = await startStandins();
    platform = await startPlatform({
      config: standins.config({
        nomadDriver: 'docker',
        imageRegistry: `${registry.host}/svc`,
        imageBase: `${hub.host}/library/python:{python}-slim`,
        imageRegistryUsername: 'pusher',
        imageRegistryPassword: 'push-secret',
      }),
      report: (error) => reports.push(error),
      autoscale: { tickMs: 200 },
    });
  });
  after(async () => {
    await platform?.close();
    await standins?.close();
    await registry?.close();
    await hub?.close();
  });
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('builds and pushes the image, and Nomad runs the workload from it', async () => {
    const { urls } = await deployClusterApp(platform);
    const job = (await svcJobs(standins.nomad)).find((j) => j.Meta?.svc_workload === 'hello')!;
    const spec = (await nomadJson(standins.nomad, `/v1/job/${job.ID}`)).json;
    const task = spec.TaskGroups[0].Tasks[0];
    assert.equal(task.Driver, 'docker');
    assert.match(task.Config.image, new RegExp(`^${registry.host.replace(/\./g, '\\.')}/svc/img-[0-9a-f]{16}@sha256:[0-9a-f]{64}$`));
    assert.equal(task.Env.SVC_WORKER_HOST, '0.0.0.0');
    assert.equal(task.Env.PYTHONPATH, undefined, 'the image sets PYTHONPATH itself');

    const answer = await getJson(urls.hello!);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.hello, 'cluster');
    assert.equal(answer.body.job, job.ID);

    // The image: the base's layer (copied from the other registry), then svc's runtime layer, pinned by digest.
    const [repository, digest] = task.Config.image.slice(registry.host.length + 1).split('@');
    firstRepository = repository!;
    // Anonymous pulls take a token first, as from Docker Hub.
    const token = (
      (await (
        await fetch(`${registry.url}/token?service=${encodeURIComponent(TOKEN_SERVICE)}&scope=repository:${repository}:pull`)
      ).json()) as { token: string }
    ).token;
    const pull = (p: string) =>
      fetch(`${registry.url}/v2/${repository}/${p}`, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/vnd.oci.image.manifest.v1+json' },
      });
    const manifest = (await (await pull(`manifests/${digest}`)).json()) as { layers: { digest: string }[]; config: { digest: string } };
    assert.equal(manifest.layers.length, 2);
    const config = (await (await pull(`blobs/${manifest.config.digest}`)).json()) as {
      config: { Env: string[]; Labels: Record<string, string> };
    };
    assert.ok(config.config.Env.includes('PYTHONPATH=/opt/svc/runtime'), config.config.Env.join(' '));
    assert.equal(config.config.Labels['dev.svc.image-id'], repository!.split('/')[1]);
    assert.ok(registry.stats.uploads >= 3, 'base layer, runtime layer and config were uploaded');
    assert.ok(hub.stats.blobGets >= 1, 'the base layer came from the other registry');
  });

  it("an image with packages: FastAPI (with pydantic-core's compiled wheel) from the image's packages layer serves the example", async () => {
    const body = await uploadProject(platform, path.join(examplesRoot, 'asgi-fastapi'));
    const deployed = await apiClient(platform.url)('POST', '/api/v1/apps/asgi-fastapi/deployments', {
      token: platform.ownerToken.secret,
      json: body,
    });
    assert.equal(deployed.status, 201, deployed.text);
    const url = deployed.json.deployments[0].urls.path as string;
    const auth = { authorization: `Bearer ${platform.ownerToken.secret}`, 'content-type': 'application/json' };
    const created = await fetch(`${url}/todos`, { method: 'POST', headers: auth, body: JSON.stringify({ title: 'ship docker' }) });
    assert.equal(created.status, 201, await created.clone().text());
    assert.equal(((await created.json()) as { title: string }).title, 'ship docker');
    // pydantic validates inside the container: a missing field is FastAPI's 422.
    assert.equal((await fetch(`${url}/todos`, { method: 'POST', headers: auth, body: '{}' })).status, 422);

    const job = (await svcJobs(standins.nomad)).find((j) => j.Meta?.svc_app === 'asgi-fastapi')!;
    const task = (await nomadJson(standins.nomad, `/v1/job/${job.ID}`)).json.TaskGroups[0].Tasks[0];
    const repository = task.Config.image.slice(registry.host.length + 1).split('@')[0];
    assert.notEqual(repository, firstRepository, 'each image has its own repository');
    // The shared layers came by mount from the first image's repository, not by upload.
    assert.ok(registry.stats.mounts >= 2, `base and runtime layers mounted (${registry.stats.mounts})`);
  });
});
