/**
 * The Nomad driver's test fixture, shared by nomad-driver.test.ts and the
 * SchedulerDriver conformance suite: a stand-in for the real job compiler
 * (jobs/ compileJob) whose raw_exec task is a small node script serving the
 * health route on each worker port, and units built by hand.
 */
import { randomBytes } from 'node:crypto';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import type { NomadJobSpec } from '../../../../core/infra/scheduler/nomad/types.js';
import type { DeploymentUnit } from '../../../../core/infra/scheduler/types.js';
import type { ScalingSpec, Workload } from '../../../../core/model/workload/types.js';

/** One second in Go's time.Duration (nanoseconds). */
export const S = 1_000_000_000;

/** In every fixture task's command line, so that a test can find (and miss) its processes. */
export const MARKER = `svc-nomad-driver-test-${randomBytes(4).toString('hex')}`;

/**
 * The container of the fixture job: one HTTP server per worker, on `NOMAD_PORT_w<i>`,
 * answering 200 on /_svc/health. With FIXTURE_FAIL set it prints `starting` to stdout,
 * `boom: <FIXTURE_FAIL>` to stderr and exits 1. On demand it prints: `POST /print?to=stdout|stderr`
 * writes the body as it is (no newline added), `GET /exit?lines=<n>&code=<c>` prints
 * `last 0`…`last <n-1>` and exits at once. Its command line ends with its allocation ID,
 * so that a test can find its process.
 */
export const CONTAINER_JS = [
  `// ${MARKER}`,
  "const http=require('http');",
  "if(process.env.FIXTURE_FAIL){console.log('starting');console.error('boom: '+process.env.FIXTURE_FAIL);process.exit(1)}",
  'const n=Number(process.env.SVC_WORKERS);',
  "function answer(q,r,i){const u=new URL(q.url,'http://fixture');",
  "if(u.pathname==='/print'){let b='';q.setEncoding('utf8');q.on('data',(c)=>b+=c);q.on('end',()=>{(u.searchParams.get('to')==='stderr'?process.stderr:process.stdout).write(b);r.end('ok')});return}",
  "if(u.pathname==='/exit'){for(let k=0;k<Number(u.searchParams.get('lines'));k++)console.log('last '+k);process.exit(Number(u.searchParams.get('code')))}",
  "r.statusCode=u.pathname==='/_svc/health'?200:404;r.end('w'+i)}",
  "for(let i=0;i<n;i++){const port=Number(process.env['NOMAD_PORT_w'+i]);",
  "http.createServer((q,r)=>answer(q,r,i)).listen(port,'127.0.0.1',()=>console.log('worker '+i+' on '+port))}",
].join('\n');

/**
 * TEST FIXTURE standing in for the real job compiler (jobs/ compileJob): a small but valid raw_exec
 * job per unit — one group, `Count` = `min_containers` (as the real compiler), `Update.MaxParallel = 0`,
 * a Scaling block from the unit's autoscaler bounds, one dynamic port `w<i>` per worker, a node task
 * serving the health route on each. A workload whose name starts with `broken` cannot start: it prints
 * `starting` and `boom: <name> cannot start`, then exits 1.
 */
export function fixtureCompile(unit: DeploymentUnit): { Job: NomadJobSpec } {
  const { workers, autoscaler } = unit.workload.scaling;
  const env: Record<string, string> = { SVC_WORKERS: String(workers), SVC_UNIT: unit.key };
  if (unit.workload.name.startsWith('broken')) env.FIXTURE_FAIL = `${unit.workload.name} cannot start`;
  return {
    Job: {
      ID: 'replaced-by-the-driver',
      Name: unit.key,
      Type: 'service',
      Datacenters: ['dc1'],
      Meta: { svc_workload: unit.workload.name, svc_doc: unit.workload.doc ?? '' },
      TaskGroups: [
        {
          Name: 'workload',
          Count: autoscaler.minContainers,
          Update: { MaxParallel: 0 },
          Scaling: { Min: autoscaler.minContainers, Max: autoscaler.maxContainers, Enabled: true, Type: 'horizontal' },
          RestartPolicy: { Attempts: 0, Delay: 1 * S, Interval: 10 * S, Mode: 'fail' },
          Networks: [{ DynamicPorts: Array.from({ length: workers }, (_, i) => ({ Label: `w${i}` })) }],
          Tasks: [
            {
              Name: 'runtime',
              Driver: 'raw_exec',
              Config: { command: process.execPath, args: ['-e', CONTAINER_JS, '${NOMAD_ALLOC_ID}'] },
              Env: env,
              KillTimeout: 2 * S,
            },
          ],
        },
      ],
    },
  };
}

/** The Nomad driver never reads the image: the compiled job says what runs. */
export const fixtureImage: BuiltImage = {
  key: 'none',
  imageId: 'img',
  pythonPath: '/nonexistent/python',
  path: '/nonexistent',
} as BuiltImage;

/** A unit of app `demo` (key `default/demo/preview@1/<name>`), 2 workers and at most 3 containers unless `scaling` says otherwise. */
export function nomadUnit(name: string, scaling: Partial<ScalingSpec> = {}, doc: string | null = null): DeploymentUnit {
  const workload: Workload = {
    app: 'demo',
    name,
    kind: 'endpoint',
    handler: name,
    onStart: null,
    doc,
    image: { id: 'img', pythonVersion: '', pythonPackages: [], requirementsFiles: [], env: {} },
    resources: { cpu: 1, memoryMiB: 512 },
    http: { route: `/${name}`, methods: ['GET'], authorized: false, domain: null },
    scaling: {
      workers: 2,
      concurrency: 1,
      maxPendingTasks: 100,
      keepWarmSeconds: 60,
      checkpointEnabled: false,
      autoscaler: { minContainers: 0, maxContainers: 3, tasksPerContainer: 1 },
      ...scaling,
    },
    parameters: null,
    returns: null,
  };
  return {
    key: `default/demo/preview@1/${name}`,
    ref: { workspace: 'default', app: 'demo', stage: 'preview' },
    workload,
    image: fixtureImage,
    source: { root: '/nonexistent', entry: 'app' },
  };
}
