import assert from 'node:assert/strict';
import { compileJob } from '../../jobs/compile.js';
import { DEFAULT_MHZ_PER_CORE } from '../../jobs/context.js';
import { jobId } from '../../jobs/names.js';
import type { NomadJobRegistration, Task, TaskGroup } from '../../jobs/types.js';
import { validateJob } from '../../jobs/validate.js';
import { assertGolden, jobContext, workload } from './fixtures.js';

const group = (body: NomadJobRegistration): TaskGroup => body.Job.TaskGroups[0]!;
const task = (body: NomadJobRegistration): Task => group(body).Tasks[0]!;

/** An image with variables (Image.env): they lead the task's Env. */
const imageWithEnv = {
  ...workload('endpoint').image,
  env: { HF_HOME: '/tmp/hf', OMP_NUM_THREADS: '1', GREETING: 'héllo "world"' },
};

/** name → [workload, context]: the golden cases. */
const cases = {
  function: [workload('function'), jobContext()],
  endpoint: [workload('endpoint'), jobContext()],
  asgi: [workload('asgi', { scaling: { concurrency: 8 } }), jobContext()],
  realtime: [workload('realtime', { scaling: { concurrency: 50 } }), jobContext()],
  'endpoint-workers-3-concurrency-4': [workload('endpoint', { scaling: { workers: 3, concurrency: 4 } }), jobContext()],
  'endpoint-autoscaler-2-20': [
    workload('endpoint', { scaling: { autoscaler: { minContainers: 2, maxContainers: 20, tasksPerContainer: 4 } } }),
    jobContext(),
  ],
  'endpoint-cpu-0.25-memory-1Gi': [workload('endpoint', { resources: { cpu: 0.25, memoryMiB: 1024 } }), jobContext()],
  'endpoint-cpu-1.5-cores': [
    workload('endpoint', { resources: { cpu: 1.5, memoryMiB: 2048 } }),
    jobContext({ cluster: { cpuMode: 'cores' } }),
  ],
  'endpoint-public-base-domain': [
    workload('endpoint', { http: { authorized: false } }),
    jobContext({ cluster: { baseDomain: 'svc.example.com', publicUrl: 'https://svc.example.com' } }),
  ],
  'endpoint-preview': [workload('endpoint', { http: { authorized: false } }), jobContext({ stage: 'preview' })],
  'asgi-checkpoint': [workload('asgi', { scaling: { checkpointEnabled: true, workers: 2 } }), jobContext()],
  'endpoint-raw-exec': [
    workload('endpoint', { scaling: { workers: 2 } }),
    jobContext({ image: null, cluster: { driver: 'raw_exec', python: '/opt/svc/venvs/img-0123456789abcdef/bin/python' } }),
  ],
  'endpoint-exec': [
    workload('endpoint'),
    jobContext({ image: null, cluster: { driver: 'exec', datacenters: ['eu-1', 'eu-2'], region: 'eu', namespace: 'svc' } }),
  ],
  'endpoint-image-env': [workload('endpoint', { image: imageWithEnv, secrets: ['db'] }), jobContext()],
} as const;

describe('compileJob()', () => {
  for (const [name, [w, context]] of Object.entries(cases)) {
    it(`compiles ${name} to the golden job, which passes validateJob`, () => {
      const body = compileJob(w, context);
      assert.deepEqual(validateJob(body), []);
      assertGolden(`compile/${name}`, body);
    });
  }

  it('is pure: the same input gives the same job, and the inputs are not changed', () => {
    const w = workload('endpoint');
    const context = jobContext();
    const before = JSON.stringify([w, context]);
    assert.deepEqual(compileJob(w, context), compileJob(w, context));
    assert.equal(JSON.stringify([w, context]), before);
  });

  it('names the job svc-<workspace>--<app>--<workload>, with --preview for a preview', () => {
    assert.equal(compileJob(workload('endpoint'), jobContext()).Job.ID, 'svc-default--shop--hello');
    assert.equal(compileJob(workload('endpoint'), jobContext({ stage: 'preview' })).Job.ID, 'svc-default--shop--hello--preview');
  });

  it("takes the driver's job ID when the context gives one (a run's: it holds the run id), and names its services and secrets Variable after it", () => {
    const id = 'svc-default--shop--run-0123456789abcdef--hello';
    const job = compileJob(workload('endpoint', { secrets: ['db'] }), jobContext({ stage: 'run', jobId: id })).Job;
    assert.equal(job.ID, id);
    assert.equal(job.Name, id);
    const task = job.TaskGroups[0]!.Tasks[0]!;
    assert.deepEqual([...new Set(task.Services!.map((service) => service.Name))], [id]);
    assert.ok(
      task.Templates!.some((template) => template.EmbeddedTmpl?.includes(`nomad/jobs/${id}`)),
      JSON.stringify(task.Templates),
    );
  });

  it('keeps workspaces apart whose names would run together with single dashes', () => {
    const a = jobId({ workspace: 'a-b', app: 'c', stage: 'deployed', workload: 'd' });
    const b = jobId({ workspace: 'a', app: 'b-c', stage: 'deployed', workload: 'd' });
    assert.notEqual(a, b);
  });

  it('shortens an ID past 63 characters with a hash, keeping it unique and valid', () => {
    const long = 'x'.repeat(40);
    const one = jobId({ workspace: long, app: long, stage: 'deployed', workload: 'a' });
    const two = jobId({ workspace: long, app: long, stage: 'deployed', workload: 'b' });
    assert.equal(one.length, 63);
    assert.notEqual(one, two);
    const body = compileJob(workload('endpoint', { name: 'a' }), jobContext({ workspace: long, app: long }));
    assert.deepEqual(validateJob(body), []);
  });

  it('gives every worker a dynamic port, a Consul service with a health check, and its port in SVC_WORKER_PORTS', () => {
    const body = compileJob(workload('endpoint', { scaling: { workers: 3 } }), jobContext());
    assert.deepEqual(group(body).Networks![0]!.DynamicPorts, [
      { Label: 'w0', Value: 0 },
      { Label: 'w1', Value: 0 },
      { Label: 'w2', Value: 0 },
    ]);
    const services = task(body).Services!;
    assert.deepEqual(
      services.map((s) => s.PortLabel),
      ['w0', 'w1', 'w2'],
    );
    for (const service of services) {
      assert.equal(service.Name, body.Job.ID);
      assert.equal(service.Checks![0]!.Path, '/_svc/health');
      assert.equal(service.Checks![0]!.PortLabel, service.PortLabel);
    }
    assert.equal(task(body).Env!.SVC_WORKER_PORTS, '${NOMAD_PORT_w0},${NOMAD_PORT_w1},${NOMAD_PORT_w2}');
    assert.deepEqual(task(body).Config.ports, ['w0', 'w1', 'w2']);
  });

  it('sets Scaling from the autoscaler, Count at its minimum, Update.MaxParallel 0 and PreserveCounts', () => {
    const body = compileJob(workload('endpoint', { scaling: { autoscaler: { minContainers: 2, maxContainers: 7 } } }), jobContext());
    assert.deepEqual(group(body).Scaling, { Min: 2, Max: 7, Enabled: true, Type: 'horizontal' });
    assert.equal(group(body).Count, 2);
    assert.deepEqual(group(body).Update, { MaxParallel: 0 });
    assert.equal(body.PreserveCounts, true);
  });

  it('maps cpu to MHz with the per-core constant, or to whole Cores, and memory MiB to MemoryMB', () => {
    assert.deepEqual(task(compileJob(workload('endpoint', { resources: { cpu: 0.5, memoryMiB: 256 } }), jobContext())).Resources, {
      CPU: DEFAULT_MHZ_PER_CORE / 2,
      MemoryMB: 256,
    });
    assert.deepEqual(
      task(compileJob(workload('endpoint', { resources: { cpu: 0.5 } }), jobContext({ cluster: { mhzPerCore: 3000 } }))).Resources,
      { CPU: 1500, MemoryMB: 512 },
    );
    assert.deepEqual(
      task(compileJob(workload('endpoint', { resources: { cpu: 2.5, memoryMiB: 4096 } }), jobContext({ cluster: { cpuMode: 'cores' } })))
        .Resources,
      { Cores: 3, MemoryMB: 4096 },
    );
  });

  it('routes only public workloads through Fabio and Traefik by default (a proxy would skip the token check)', () => {
    const tags = (authorized: boolean, proxyTags: 'public' | 'all' | 'none' = 'public') =>
      task(
        compileJob(workload('endpoint', { http: { authorized } }), jobContext({ cluster: { baseDomain: 'svc.example.com', proxyTags } })),
      ).Services![0]!.Tags!;
    assert.ok(!tags(true).some((tag) => tag.startsWith('urlprefix-') || tag.startsWith('traefik.')));
    assert.ok(tags(false).includes('urlprefix-/default/shop/hello strip=/default/shop/hello'));
    assert.ok(tags(false).includes('urlprefix-shop-hello.svc.example.com/'));
    assert.ok(tags(false).includes('traefik.http.routers.svc-default--shop--hello.rule=Host(`shop-hello.svc.example.com`)'));
    assert.ok(tags(true, 'all').includes('traefik.enable=true'));
    assert.ok(!tags(false, 'none').includes('traefik.enable=true'));
    assert.ok(tags(true).includes('svc-app=shop'));
  });

  it("routes a deployed workload's custom domain at the root through Fabio and Traefik, and a preview's not at all", () => {
    const tags = (stage: 'deployed' | 'preview') =>
      task(
        compileJob(
          workload('endpoint', { http: { authorized: false, domain: 'API.Example.com' } }),
          jobContext({ stage, cluster: { proxyTags: 'public' } }),
        ),
      ).Services![0]!.Tags!;
    const name = 'svc-default--shop--hello';
    assert.ok(tags('deployed').includes('urlprefix-api.example.com/'));
    assert.ok(tags('deployed').includes(`traefik.http.routers.${name}-domain.rule=Host(\`api.example.com\`)`));
    assert.ok(!tags('preview').some((tag) => tag.includes('api.example.com')));
  });

  it('gives functions no routing tags but still a health-checked service', () => {
    const service = task(compileJob(workload('function'), jobContext({ cluster: { proxyTags: 'all' } }))).Services![0]!;
    assert.ok(!service.Tags!.some((tag) => tag.startsWith('urlprefix-')));
    assert.equal(service.Checks![0]!.Type, 'http');
  });

  it('runs the bundle as an artifact with its checksum and the runtime env', () => {
    const body = compileJob(workload('endpoint', { scaling: { checkpointEnabled: true } }), jobContext());
    assert.deepEqual(task(body).Artifacts, [
      {
        GetterSource: 'https://svc.example.com/api/v1/bundles/abc.tar.gz?expires=1700000000&signature=deadbeef',
        GetterOptions: { archive: 'tar.gz', checksum: `sha256:${'ab'.repeat(32)}` },
        GetterMode: 'dir',
        RelativeDest: 'local/app',
      },
    ]);
    const env = task(body).Env!;
    assert.equal(env.SVC_APP, 'shop');
    assert.equal(env.SVC_WORKSPACE, 'default');
    assert.equal(env.SVC_STAGE, 'deployed');
    assert.equal(env.SVC_WORKLOAD, 'hello');
    assert.equal(env.SVC_CHECKPOINT, '1');
  });

  it("gives the task the image's variables first, so that svc's own follow them; secrets come from the template, over both", () => {
    const body = compileJob(workload('endpoint', { image: imageWithEnv, secrets: ['db'] }), jobContext());
    const env = task(body).Env!;
    assert.deepEqual(Object.entries(env).slice(0, 3), Object.entries(imageWithEnv.env));
    assert.equal(env.SVC_WORKLOAD, 'hello');
    assert.equal(task(body).Templates![0]!.Envvars, true, 'Nomad applies template variables after the task Env');
    const plain = task(compileJob(workload('endpoint'), jobContext())).Env!;
    assert.deepEqual(Object.keys(env).slice(3), Object.keys(plain), 'nothing else changes');
  });

  it("keeps docker jobs on clients of the image's architecture; raw_exec jobs run anywhere", () => {
    const docker = compileJob(workload('endpoint'), jobContext({ cluster: { platform: 'linux/arm64' } })).Job;
    assert.deepEqual(docker.Constraints, [{ LTarget: '${attr.cpu.arch}', RTarget: 'arm64', Operand: '=' }]);
    assert.deepEqual(validateJob({ Job: docker }), []);
    const rawExec = compileJob(workload('endpoint'), jobContext({ image: null, cluster: { driver: 'raw_exec' } })).Job;
    assert.equal(rawExec.Constraints, undefined);
  });

  it('needs an image for the docker driver', () => {
    assert.throws(() => compileJob(workload('endpoint'), jobContext({ image: null })), /docker driver needs context.image/);
  });

  it("keeps the UI description within Nomad's 1000 characters", () => {
    const body = compileJob(workload('endpoint', { doc: 'd'.repeat(2000) }), jobContext());
    assert.ok(body.Job.UI!.Description!.length <= 1000);
    assert.deepEqual(validateJob(body), []);
  });
});
