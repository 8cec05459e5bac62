import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startNomadStandin, type NomadStandin } from './nomad/index.js';
import { pidsMatching, waitNoneMatching } from '../helpers/processes.js';
import { until } from '../helpers/until.js';

const S = 1_000_000_000;

/** A node one-liner: listens on NOMAD_PORT_http, answers with its env, writes to stdout and stderr. */
const SERVER_JS = [
  "const http=require('http');",
  'const port=Number(process.env.NOMAD_PORT_http);',
  "http.createServer((q,r)=>{r.setHeader('content-type','application/json');r.end(JSON.stringify(process.env))})",
  ".listen(port,'127.0.0.1',()=>{console.log('listening on '+port);console.error('stderr line')});",
].join('');

function job(
  id: string,
  overrides: Record<string, unknown> = {},
  group: Record<string, unknown> = {},
  task: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ID: id,
    Datacenters: ['dc1'],
    Meta: { owner: 'tests' },
    TaskGroups: [
      {
        Name: 'web',
        Count: 1,
        Update: { MaxParallel: 0 },
        RestartPolicy: { Attempts: 1, Delay: 1 * S, Interval: 10 * S, Mode: 'fail' },
        Networks: [{ DynamicPorts: [{ Label: 'http' }] }],
        Tasks: [
          {
            Name: 'server',
            Driver: 'raw_exec',
            Config: { command: process.execPath, args: ['-e', SERVER_JS] },
            Env: { GREETING: 'hello ${NOMAD_JOB_NAME} on ${NOMAD_PORT_http}' },
            KillTimeout: 2 * S,
            ...task,
          },
        ],
        ...group,
      },
    ],
    ...overrides,
  };
}

interface Answer {
  status: number;
  text: string;
  headers: Headers;
  json: () => any;
}

async function call(base: string, method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(base + p, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, headers: response.headers, json: () => JSON.parse(text) };
}

async function runningAlloc(base: string, id: string): Promise<any> {
  return until(`a running allocation of ${id}`, async () => {
    const list = (await call(base, 'GET', `/v1/job/${id}/allocations`)).json() as any[];
    const running = list.find((a) => a.ClientStatus === 'running');
    return running ? (await call(base, 'GET', `/v1/allocation/${running.ID}`)).json() : undefined;
  });
}

describe('Nomad stand-in', () => {
  let dataDir: string;
  let nomad: NomadStandin;
  let base: string;

  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'nomad-standin-'));
    nomad = await startNomadStandin({ dataDir });
    base = nomad.url;
  });

  afterEach(async () => {
    await nomad.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('PUT /v1/jobs', () => {
    it('registers a job and reads it back canonicalized, with EvalID, JobModifyIndex and X-Nomad-Index', async () => {
      const reg = await call(base, 'PUT', '/v1/jobs', { Job: job('api') });
      assert.equal(reg.status, 200, reg.text);
      const reply = reg.json();
      assert.match(reply.EvalID, /^[0-9a-f-]{36}$/);
      assert.ok(reply.JobModifyIndex > 0);
      assert.equal(reg.headers.get('x-nomad-index'), String(reply.Index));
      assert.equal(reply.Warnings, '');
      const read = await call(base, 'GET', '/v1/job/api');
      assert.equal(read.status, 200);
      assert.equal(read.headers.get('content-type'), 'application/json');
      const stored = read.json();
      assert.equal(stored.Name, 'api');
      assert.equal(stored.Type, 'service');
      assert.equal(stored.Priority, 50);
      assert.equal(stored.Namespace, 'default');
      assert.equal(stored.Region, 'global');
      assert.equal(stored.Version, 0);
      assert.equal(stored.JobModifyIndex, reply.JobModifyIndex);
      assert.equal(stored.TaskGroups[0].Tasks[0].Resources.MemoryMB, 300);
      assert.equal(stored.TaskGroups[0].EphemeralDisk.SizeMB, 300);
      const list = (await call(base, 'GET', '/v1/jobs?prefix=ap')).json();
      assert.deepEqual(
        list.map((j: any) => j.ID),
        ['api'],
      );
      assert.deepEqual((await call(base, 'GET', '/v1/jobs?prefix=zz')).json(), []);
    });

    it('answers 404 "job not found" for an unknown job', async () => {
      const read = await call(base, 'GET', '/v1/job/nope');
      assert.equal(read.status, 404);
      assert.equal(read.text, 'job not found');
      assert.match(read.headers.get('content-type') ?? '', /^text\/plain/);
    });

    it("checks EnforceIndex against JobModifyIndex with Nomad's 500 texts", async () => {
      const first = (
        await call(base, 'PUT', '/v1/jobs', { Job: job('cas', {}, { Count: 0 }), EnforceIndex: true, JobModifyIndex: 0 })
      ).json();
      const again = await call(base, 'PUT', '/v1/jobs', { Job: job('cas', {}, { Count: 0 }), EnforceIndex: true, JobModifyIndex: 0 });
      assert.equal(again.status, 500);
      assert.equal(again.text, 'Enforcing job modify index 0: job already exists');
      const stale = await call(base, 'PUT', '/v1/jobs', {
        Job: job('cas', { Priority: 60 }, { Count: 0 }),
        EnforceIndex: true,
        JobModifyIndex: first.JobModifyIndex + 100,
      });
      assert.equal(stale.status, 500);
      assert.equal(
        stale.text,
        `Enforcing job modify index ${first.JobModifyIndex + 100}: job exists with conflicting job modify index: ${first.JobModifyIndex}`,
      );
      const missing = await call(base, 'PUT', '/v1/jobs', { Job: job('other', {}, { Count: 0 }), EnforceIndex: true, JobModifyIndex: 5 });
      assert.equal(missing.text, 'Enforcing job modify index 5: job does not exist');
      const ok = await call(base, 'PUT', '/v1/jobs', {
        Job: job('cas', { Priority: 60 }, { Count: 0 }),
        EnforceIndex: true,
        JobModifyIndex: first.JobModifyIndex,
      });
      assert.equal(ok.status, 200, ok.text);
      assert.ok(ok.json().JobModifyIndex > first.JobModifyIndex);
      assert.equal((await call(base, 'GET', '/v1/job/cas')).json().Version, 1);
    });

    it("rejects an unknown field with Go's decoder text (strict by default)", async () => {
      const bad = job('typo', {}, {}, { Resources: { Memory: 512 } });
      const answer = await call(base, 'PUT', '/v1/jobs', { Job: bad });
      assert.equal(answer.status, 400);
      assert.equal(answer.text, 'json: unknown field "Memory"');
    });

    it('ignores unknown fields and matches keys case-insensitively when strictDecode is false, like a real server', async () => {
      const lenient = await startNomadStandin({ dataDir, strictDecode: false });
      try {
        const answer = await call(lenient.url, 'PUT', '/v1/jobs', { job: job('typo', {}, { Count: 0 }, { Resources: { Memory: 512 } }) });
        assert.equal(answer.status, 200, answer.text);
        const stored = (await call(lenient.url, 'GET', '/v1/job/typo')).json();
        assert.equal(stored.TaskGroups[0].Tasks[0].Resources.MemoryMB, 300);
      } finally {
        await lenient.close();
      }
    });

    it("rejects a duration given as a string with 400 and Go's type error", async () => {
      const answer = await call(base, 'PUT', '/v1/jobs', { Job: job('dur', {}, { RestartPolicy: { Delay: '15s' } }) });
      assert.equal(answer.status, 400);
      assert.equal(
        answer.text,
        'json: cannot unmarshal string into Go struct field RestartPolicy.Job.TaskGroups.RestartPolicy.Delay of type time.Duration',
      );
    });

    it('answers 400 without Job or Job.ID and 500 with a multierror for an invalid job', async () => {
      assert.equal((await call(base, 'PUT', '/v1/jobs', {})).text, 'Job must be specified');
      assert.equal((await call(base, 'PUT', '/v1/jobs', { Job: { Name: 'x' } })).text, "Job ID hasn't been provided");
      assert.equal((await call(base, 'PUT', '/v1/job/other', { Job: job('x') })).text, 'Job ID does not match name');
      const invalid = await call(base, 'PUT', '/v1/jobs', { Job: { ID: 'empty' } });
      assert.equal(invalid.status, 500);
      assert.equal(invalid.text, '1 error occurred:\n\t* Missing job task groups\n\n');
    });

    it('keeps the current group counts on re-register with PreserveCounts', async () => {
      await call(base, 'PUT', '/v1/jobs', { Job: job('keep', {}, { Count: 0, Scaling: { Min: 0, Max: 5 } }) });
      const scaled = await call(base, 'POST', '/v1/job/keep/scale', { Count: 2, Target: { Group: 'web' }, Message: 'test' });
      assert.equal(scaled.status, 200, scaled.text);
      await call(base, 'PUT', '/v1/jobs', {
        Job: job('keep', { Meta: { owner: 'v2' } }, { Count: 0, Scaling: { Min: 0, Max: 5 } }),
        PreserveCounts: true,
      });
      assert.equal((await call(base, 'GET', '/v1/job/keep')).json().TaskGroups[0].Count, 2);
      await call(base, 'PUT', '/v1/jobs', { Job: job('keep', { Meta: { owner: 'v3' } }, { Count: 0, Scaling: { Min: 0, Max: 5 } }) });
      assert.equal((await call(base, 'GET', '/v1/job/keep')).json().TaskGroups[0].Count, 0);
    });

    it('does not bump the version when the same spec is registered again', async () => {
      const first = (await call(base, 'PUT', '/v1/jobs', { Job: job('same', {}, { Count: 0 }) })).json();
      const second = (await call(base, 'PUT', '/v1/jobs', { Job: job('same', {}, { Count: 0 }) })).json();
      assert.equal(second.JobModifyIndex, first.JobModifyIndex);
      assert.notEqual(second.EvalID, first.EvalID);
      assert.equal((await call(base, 'GET', '/v1/job/same')).json().Version, 0);
    });
  });

  describe('POST /v1/job/:id/plan', () => {
    it('dry-runs a change and reports the diff and the desired updates without changing the job', async () => {
      const reg = (await call(base, 'PUT', '/v1/jobs', { Job: job('plan', {}, { Count: 0 }) })).json();
      const answer = await call(base, 'POST', '/v1/job/plan/plan', { Job: job('plan', { Priority: 70 }, { Count: 2 }), Diff: true });
      assert.equal(answer.status, 200, answer.text);
      const plan = answer.json();
      assert.equal(plan.JobModifyIndex, reg.JobModifyIndex);
      assert.equal(plan.Diff.Type, 'Edited');
      assert.deepEqual(
        plan.Diff.Fields.find((f: any) => f.Name === 'Priority'),
        { Type: 'Edited', Name: 'Priority', Old: '50', New: '70', Annotations: null },
      );
      const group = plan.Diff.TaskGroups[0];
      assert.equal(group.Type, 'Edited');
      assert.deepEqual(
        group.Fields.find((f: any) => f.Name === 'Count'),
        { Type: 'Edited', Name: 'Count', Old: '0', New: '2', Annotations: null },
      );
      assert.equal(plan.Annotations.DesiredTGUpdates.web.Place, 2);
      assert.equal((await call(base, 'GET', '/v1/job/plan')).json().Priority, 50);
      assert.equal((await call(base, 'POST', '/v1/job/other/plan', { Job: job('plan') })).text, 'Job ID does not match');
    });
  });

  describe('POST /v1/job/:id/scale', () => {
    it('scales within Scaling.Min/Max and records the event newest first', async () => {
      await call(base, 'PUT', '/v1/jobs', { Job: job('sc', {}, { Count: 0, Scaling: { Min: 0, Max: 3 } }) });
      const answer = await call(base, 'POST', '/v1/job/sc/scale', { Count: 1, Target: { Group: 'web' }, Message: 'up' });
      assert.equal(answer.status, 200, answer.text);
      assert.match(answer.json().EvalID, /^[0-9a-f-]{36}$/);
      await runningAlloc(base, 'sc');
      const status = (await call(base, 'GET', '/v1/job/sc/scale')).json();
      assert.equal(status.TaskGroups.web.Desired, 1);
      assert.equal(status.TaskGroups.web.Running, 1);
      assert.equal(status.TaskGroups.web.Events[0].Message, 'up');
      assert.equal(status.TaskGroups.web.Events[0].PreviousCount, 0);
    });

    it("refuses counts outside Scaling.Min/Max and other bad requests with Nomad's 400 texts", async () => {
      await call(base, 'PUT', '/v1/jobs', { Job: job('sc', {}, { Count: 1, Scaling: { Min: 1, Max: 3 } }) });
      const low = await call(base, 'POST', '/v1/job/sc/scale', { Count: 0, Target: { Group: 'web' } });
      assert.equal(low.status, 400);
      assert.equal(low.text, 'group count was less than scaling policy minimum: 0 < 1');
      const high = await call(base, 'POST', '/v1/job/sc/scale', { Count: 4, Target: { Group: 'web' } });
      assert.equal(high.text, 'group count was greater than scaling policy maximum: 4 > 3');
      assert.equal(
        (await call(base, 'POST', '/v1/job/sc/scale', { Count: 1, Target: {} })).text,
        'missing task group name for scaling action',
      );
      assert.equal(
        (await call(base, 'POST', '/v1/job/sc/scale', { Count: -1, Target: { Group: 'web' } })).text,
        "scaling action count can't be negative",
      );
      assert.equal(
        (await call(base, 'POST', '/v1/job/sc/scale', { Count: 1, Target: { Group: 'db' } })).text,
        'task group "db" specified for scaling does not exist in job',
      );
      const unknown = await call(base, 'POST', '/v1/job/none/scale', { Count: 1, Target: { Group: 'web' } });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.text, 'job "none" not found');
    });

    it('blocks scaling while a deployment of the job is active', async () => {
      await call(base, 'PUT', '/v1/jobs', {
        Job: job(
          'dep',
          {},
          { Count: 1, Update: { MaxParallel: 1, MinHealthyTime: 60 * S, HealthyDeadline: 120 * S, ProgressDeadline: 180 * S } },
        ),
      });
      const deployment = (await call(base, 'GET', '/v1/job/dep/deployment')).json();
      assert.equal(deployment.Status, 'running');
      const answer = await call(base, 'POST', '/v1/job/dep/scale', { Count: 2, Target: { Group: 'web' } });
      assert.equal(answer.status, 400);
      assert.equal(answer.text, 'job scaling blocked due to active deployment');
    });
  });

  describe('raw_exec allocations', () => {
    it('runs the task with NOMAD_PORT_<label> and the NOMAD_* env, and it listens there', async () => {
      await call(base, 'PUT', '/v1/jobs', { Job: job('run') });
      const alloc = await runningAlloc(base, 'run');
      const port = alloc.AllocatedResources.Shared.Ports.find((p: any) => p.Label === 'http');
      assert.ok(port.Value >= 20000 && port.Value <= 32000);
      assert.equal(alloc.Name, 'run.web[0]');
      const env = await until('the task to answer', async () => {
        const response = await fetch(`http://127.0.0.1:${port.Value}/`);
        return response.ok ? ((await response.json()) as Record<string, string>) : undefined;
      });
      assert.equal(env.NOMAD_PORT_http, String(port.Value));
      assert.equal(env.NOMAD_HOST_PORT_http, String(port.Value));
      assert.equal(env.NOMAD_IP_http, '127.0.0.1');
      assert.equal(env.NOMAD_ADDR_http, `127.0.0.1:${port.Value}`);
      assert.equal(env.NOMAD_ALLOC_ID, alloc.ID);
      assert.equal(env.NOMAD_ALLOC_INDEX, '0');
      assert.equal(env.NOMAD_ALLOC_NAME, 'run.web[0]');
      assert.equal(env.NOMAD_JOB_NAME, 'run');
      assert.equal(env.NOMAD_GROUP_NAME, 'web');
      assert.equal(env.NOMAD_TASK_NAME, 'server');
      assert.equal(env.NOMAD_ALLOC_DIR, path.join(dataDir, 'alloc', alloc.ID, 'alloc'));
      assert.equal(env.NOMAD_TASK_DIR, path.join(dataDir, 'alloc', alloc.ID, 'server', 'local'));
      assert.equal(env.NOMAD_SECRETS_DIR, path.join(dataDir, 'alloc', alloc.ID, 'server', 'secrets'));
      assert.equal(env.NOMAD_META_owner, 'tests');
      assert.equal(env.NOMAD_META_OWNER, 'tests');
      assert.equal(env.GREETING, `hello run on ${port.Value}`);
    });

    it('keeps stdout and stderr per allocation for /v1/client/fs/logs', async () => {
      await call(base, 'PUT', '/v1/jobs', { Job: job('logs') });
      const alloc = await runningAlloc(base, 'logs');
      const port = alloc.AllocatedResources.Shared.Ports[0].Value;
      const stdout = await until('stdout', async () => {
        const answer = await call(base, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=server&type=stdout&plain=true`);
        return answer.text.includes('listening') ? answer : undefined;
      });
      assert.equal(stdout.text, `listening on ${port}\n`);
      assert.equal(stdout.headers.get('content-type'), 'text/plain');
      const stderr = await until('stderr', async () => {
        const answer = await call(base, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=server&type=stderr&plain=true`);
        return answer.text.includes('stderr line') ? answer : undefined;
      });
      assert.equal(stderr.text, 'stderr line\n');
      const framed = (await call(base, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=server&type=stdout`)).json();
      assert.equal(Buffer.from(framed.Data, 'base64').toString(), `listening on ${port}\n`);
      assert.equal((await call(base, 'GET', `/v1/client/fs/logs/${alloc.ID}?type=stdout`)).text, 'must provide task name');
      assert.equal((await call(base, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=server`)).text, 'must provide log type (stdout/stderr)');
    });

    it('kills the whole process group on stop, and keeps the job readable with Stop: true', async () => {
      const marker = `standin-marker-${process.pid}-${Date.now()}`;
      await call(base, 'PUT', '/v1/jobs', {
        Job: job(
          'stop',
          {},
          { Networks: [] },
          {
            Config: {
              command: '/bin/sh',
              args: [
                '-c',
                `"${process.execPath}" -e "setInterval(()=>{},1000)" ${marker} & "${process.execPath}" -e "setInterval(()=>{},1000)" ${marker}; wait`,
              ],
            },
          },
        ),
      });
      await runningAlloc(base, 'stop');
      // The shell and its two children all carry the marker.
      await until('the shell and both children', async () => pidsMatching(marker).length >= 3);
      const answer = await call(base, 'DELETE', '/v1/job/stop');
      assert.equal(answer.status, 200, answer.text);
      assert.match(answer.json().EvalID, /^[0-9a-f-]{36}$/);
      assert.deepEqual(await waitNoneMatching(marker, 30_000), []);
      const stopped = await until('the job to be dead', async () => {
        const j = (await call(base, 'GET', '/v1/job/stop')).json();
        return j.Status === 'dead' ? j : undefined;
      });
      assert.equal(stopped.Stop, true);
      // The allocation's client status follows its task's exit (a moment later on a busy machine).
      const allocs = await until('the allocation to be complete', async () => {
        const found = (await call(base, 'GET', '/v1/job/stop/allocations')).json();
        return found[0]?.ClientStatus === 'complete' ? found : undefined;
      });
      assert.equal(allocs[0].DesiredStatus, 'stop');
    });

    it('removes the job on purge (404 after) and answers 200 with an empty EvalID for an unknown job', async () => {
      await call(base, 'PUT', '/v1/jobs', { Job: job('gone') });
      await runningAlloc(base, 'gone');
      const answer = await call(base, 'DELETE', '/v1/job/gone?purge=true');
      assert.equal(answer.status, 200);
      const read = await call(base, 'GET', '/v1/job/gone');
      assert.equal(read.status, 404);
      assert.equal(read.text, 'job not found');
      const unknown = await call(base, 'DELETE', '/v1/job/never');
      assert.equal(unknown.status, 200);
      assert.equal(unknown.json().EvalID, '');
    });

    it('starts and stops allocations when the count changes', async () => {
      await call(base, 'PUT', '/v1/jobs', { Job: job('count', {}, { Count: 2 }) });
      await until(
        'two running allocations',
        async () =>
          ((await call(base, 'GET', '/v1/job/count/allocations')).json() as any[]).filter((a) => a.ClientStatus === 'running').length === 2,
      );
      await call(base, 'POST', '/v1/job/count/scale', { Count: 1, Target: { Group: 'web' } });
      const allocs = await until('one allocation stopped', async () => {
        const list = (await call(base, 'GET', '/v1/job/count/allocations')).json() as any[];
        return list.filter((a) => a.ClientStatus === 'complete').length === 1 ? list : undefined;
      });
      assert.equal(allocs.find((a: any) => a.ClientStatus === 'complete').Name, 'count.web[1]');
      assert.equal(allocs.find((a: any) => a.ClientStatus === 'running').Name, 'count.web[0]');
    });

    it('restarts a failing task per the restart policy, then marks the allocation failed', async () => {
      await call(base, 'PUT', '/v1/jobs', {
        Job: job('crash', {}, { Networks: [] }, { Config: { command: '/bin/sh', args: ['-c', 'echo boom; exit 3'] } }),
      });
      const alloc = await until('the allocation to fail', async () => {
        const list = (await call(base, 'GET', '/v1/job/crash/allocations')).json() as any[];
        return list[0]?.ClientStatus === 'failed' ? (await call(base, 'GET', `/v1/allocation/${list[0].ID}`)).json() : undefined;
      });
      const state = alloc.TaskStates.server;
      assert.equal(state.State, 'dead');
      assert.equal(state.Failed, true);
      assert.equal(state.Restarts, 1);
      assert.ok(state.Events.some((e: any) => e.Type === 'Not Restarting'));
      assert.equal(state.Events.filter((e: any) => e.Type === 'Terminated')[0].ExitCode, 3);
    });

    it('downloads an artifact into the task dir and unpacks a tar.gz', async () => {
      const src = path.join(dataDir, 'src');
      mkdirSync(src);
      writeFileSync(path.join(src, 'hello.txt'), 'from the bundle\n');
      const archive = path.join(dataDir, 'bundle.tar.gz');
      execFileSync('tar', ['-czf', archive, '-C', src, 'hello.txt']);
      const bytes = readFileSync(archive);
      const files: Server = createServer((_req, res) => res.end(bytes));
      files.listen(0, '127.0.0.1');
      await new Promise((resolve) => files.once('listening', resolve));
      try {
        const url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/bundle.tar.gz`;
        const checksum = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
        await call(base, 'PUT', '/v1/jobs', {
          Job: job(
            'art',
            {},
            { Networks: [] },
            {
              Artifacts: [{ GetterSource: url, GetterOptions: { checksum } }],
              Config: { command: '/bin/sh', args: ['-c', 'cat ${NOMAD_TASK_DIR}/hello.txt; sleep 300'] },
            },
          ),
        });
        const alloc = await runningAlloc(base, 'art');
        const out = await until('the artifact content in the log', async () => {
          const answer = await call(base, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=server&type=stdout&plain=true`);
          return answer.text.includes('bundle') ? answer.text : undefined;
        });
        assert.equal(out, 'from the bundle\n');
      } finally {
        files.close();
      }
    });
  });

  describe('Consul registration', () => {
    it("registers group services with Nomad's IDs, address, tags, meta and HTTP check, and deregisters them on stop", async () => {
      const calls: Array<{ method: string; url: string; body: string }> = [];
      const consul = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          calls.push({ method: req.method ?? '', url: req.url ?? '', body });
          if (req.url === '/v1/agent/checks') {
            res.setHeader('content-type', 'application/json');
            res.end('{}');
          } else res.end();
        });
      });
      consul.listen(0, '127.0.0.1');
      await new Promise((resolve) => consul.once('listening', resolve));
      const withConsul = await startNomadStandin({ dataDir, consulUrl: `http://127.0.0.1:${(consul.address() as AddressInfo).port}` });
      try {
        const service = {
          Name: 'api-web',
          PortLabel: 'http',
          Tags: ['svc', 'urlprefix-/${NOMAD_JOB_NAME}'],
          Meta: { app: 'api' },
          Checks: [{ Type: 'http', Path: '/health', Interval: 10 * S, Timeout: 2 * S }],
        };
        await call(withConsul.url, 'PUT', '/v1/jobs', { Job: job('api', {}, { Services: [service] }) });
        const alloc = await runningAlloc(withConsul.url, 'api');
        const port = alloc.AllocatedResources.Shared.Ports[0].Value;
        const register = calls.find((c) => c.url === '/v1/agent/service/register');
        assert.ok(register, 'a register call');
        assert.equal(register.method, 'PUT');
        const body = JSON.parse(register.body);
        const id = `_nomad-task-${alloc.ID}-group-web-api-web-http`;
        assert.equal(body.ID, id);
        assert.equal(body.Name, 'api-web');
        assert.equal(body.Address, '127.0.0.1');
        assert.equal(body.Port, port);
        assert.deepEqual(body.Tags, ['svc', 'urlprefix-/api']);
        assert.deepEqual(body.Meta, { app: 'api', 'external-source': 'nomad' });
        assert.equal(body.Checks.length, 1);
        assert.match(body.Checks[0].CheckID, /^_nomad-check-[0-9a-f]{64}$/);
        assert.equal(body.Checks[0].Name, 'service: "api-web" check');
        assert.equal(body.Checks[0].HTTP, `http://127.0.0.1:${port}/health`);
        assert.equal(body.Checks[0].Interval, '10s');
        assert.equal(body.Checks[0].Timeout, '2s');
        await call(withConsul.url, 'DELETE', '/v1/job/api');
        await until('the deregister call', async () =>
          calls.some((c) => c.method === 'PUT' && c.url === `/v1/agent/service/deregister/${encodeURIComponent(id)}`),
        );
        assert.deepEqual(withConsul.consulErrors, []);
      } finally {
        await withConsul.close();
        consul.close();
      }
    });
  });

  describe('blocking queries and ACLs', () => {
    it('holds GET /v1/job/:id?index= until the job changes, then answers with a higher X-Nomad-Index', async () => {
      await call(base, 'PUT', '/v1/jobs', { Job: job('block', {}, { Count: 0 }) });
      const first = await call(base, 'GET', '/v1/job/block');
      const index = Number(first.headers.get('x-nomad-index'));
      let answered = false;
      const pending = call(base, 'GET', `/v1/job/block?index=${index}&wait=60s`).then((a) => {
        answered = true;
        return a;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(answered, false, 'the query returned before any change');
      await call(base, 'PUT', '/v1/jobs', { Job: job('block', { Priority: 80 }, { Count: 0 }) });
      const changed = await pending;
      assert.ok(Number(changed.headers.get('x-nomad-index')) > index);
      assert.equal(changed.json().Priority, 80);
      assert.equal((await call(base, 'GET', '/v1/job/block?index=1&wait=later')).text, 'Invalid wait time');
      assert.equal((await call(base, 'GET', '/v1/job/block?index=x')).text, 'Invalid index');
    });

    it("wakes a blocking GET /v1/job/:id/allocations at each of its allocation's own changes (pending, then running)", async () => {
      // Each write raises the index of what it changed before watchers look (Nomad's watch sets fire after the commit).
      await call(base, 'PUT', '/v1/jobs', { Job: job('wake', {}, { Count: 0 }) });
      let index = Number((await call(base, 'GET', '/v1/job/wake/allocations')).headers.get('x-nomad-index'));
      await call(base, 'POST', '/v1/job/wake/scale', { Count: 1, Target: { Group: 'web' } });
      const seen: string[] = [];
      const deadline = Date.now() + 20_000;
      while (!seen.includes('running')) {
        // Each answer must come from a change, long before the wait of 60 s.
        const answer = await call(base, 'GET', `/v1/job/wake/allocations?index=${index}&wait=60s`);
        assert.ok(Date.now() < deadline, `no wake-up for the allocation's changes (saw ${seen.join(', ')})`);
        const next = Number(answer.headers.get('x-nomad-index'));
        assert.ok(next > index, `${next} > ${index}`);
        index = next;
        const [alloc] = answer.json() as { ClientStatus: string; ModifyIndex: number }[];
        assert.ok(alloc, 'the allocation is listed');
        assert.ok(alloc.ModifyIndex <= index, 'the answer holds the write that woke it');
        seen.push(alloc.ClientStatus);
      }
    });

    it('tells blocking queries of a write only once the write is complete (its object carries the new index)', async () => {
      // A write assigns the index bump() returns to what it changed; a watcher woken before that
      // assignment would compare the old index, go back to sleep, and miss the change until the wait ends.
      const written = { ModifyIndex: 0 };
      let seenAtWake = -1;
      nomad.cluster.changes.once('change', () => (seenAtWake = written.ModifyIndex));
      written.ModifyIndex = nomad.cluster.bump();
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(seenAtWake, written.ModifyIndex);
    });

    it('requires the configured ACL token in X-Nomad-Token or Authorization: Bearer', async () => {
      const secured = await startNomadStandin({ dataDir, aclToken: 'secret' });
      try {
        const none = await call(secured.url, 'GET', '/v1/jobs');
        assert.equal(none.status, 403);
        assert.equal(none.text, 'Permission denied');
        // Nomad 1.11 denies an unknown secret as it denies no token (nomad/auth/auth.go Authenticate).
        assert.equal((await call(secured.url, 'GET', '/v1/jobs', undefined, { 'X-Nomad-Token': 'wrong' })).text, 'Permission denied');
        assert.equal((await call(secured.url, 'GET', '/v1/jobs', undefined, { 'X-Nomad-Token': 'secret' })).status, 200);
        assert.equal((await call(secured.url, 'GET', '/v1/jobs', undefined, { Authorization: 'Bearer secret' })).status, 200);
      } finally {
        await secured.close();
      }
    });

    it('keeps jobs per namespace and refuses a nonexistent one', async () => {
      const answer = await call(base, 'PUT', '/v1/jobs?namespace=team', { Job: job('ns', {}, { Count: 0 }) });
      assert.equal(answer.status, 500);
      assert.equal(answer.text, 'job "ns" is in nonexistent namespace "team"');
      const scoped = await startNomadStandin({ dataDir, namespaces: ['team'] });
      try {
        assert.equal((await call(scoped.url, 'PUT', '/v1/jobs?namespace=team', { Job: job('ns', {}, { Count: 0 }) })).status, 200);
        assert.equal((await call(scoped.url, 'GET', '/v1/job/ns')).status, 404);
        assert.equal((await call(scoped.url, 'GET', '/v1/job/ns?namespace=team')).json().Namespace, 'team');
        assert.deepEqual(
          (await call(scoped.url, 'GET', '/v1/jobs?namespace=*')).json().map((j: any) => j.Namespace),
          ['team'],
        );
      } finally {
        await scoped.close();
      }
    });
  });
});
