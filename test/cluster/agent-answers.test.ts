/**
 * The answers svc can meet from real agents that its normal scenarios rarely
 * produce (opt-in, as the rest of test/cluster/): Nomad's 404s, the three
 * EnforceIndex conflicts, a scale of an unknown group or job, ACL denials;
 * Consul's CAS false, a renew of an unknown session, a blocking query, ACL
 * denials. Every request goes through svc's own clients (NomadClient,
 * ConsulClient) with svc's tokens, so with `SVC_RECORD_AGENTS` set the
 * recorder keeps them as svc sends them (test/fixtures/agents/, replayed
 * against the stand-ins by test/standins/replay.test.ts). The assertions say
 * what svc's clients make of each answer.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SvcError } from '../../core/model/errors.js';
import { NomadClient } from '../../core/infra/scheduler/nomad/client.js';
import { ConsulClient, ConsulError } from '../../core/infra/state/consul-client.js';
import { until } from '../helpers/until.js';
import { NAMESPACE } from './agents.js';
import { useCluster } from './suite.js';

const S = 1_000_000_000;
const JOB = 'svc-answers--capture--sleeper';

/** A raw_exec job shaped like svc's (one group, one task, a dynamic port, no deployments), that any stand-in can run too. */
function sleeper(count: number, message: string): Record<string, unknown> {
  return {
    ID: JOB,
    Name: JOB,
    Type: 'service',
    Datacenters: ['dc1'],
    Meta: { svc_unit: 'answers/capture/sleeper' },
    TaskGroups: [
      {
        Name: 'sleeper',
        Count: count,
        Update: { MaxParallel: 0 },
        RestartPolicy: { Attempts: 0, Interval: 60 * S, Delay: S, Mode: 'fail' },
        Networks: [{ DynamicPorts: [{ Label: 'w0' }] }],
        Tasks: [
          {
            Name: 'sleeper',
            Driver: 'raw_exec',
            Config: { command: '/bin/sh', args: ['-c', `echo ${message}; exec sleep 600`] },
            Resources: { CPU: 20, MemoryMB: 32 },
            KillTimeout: S,
          },
        ],
      },
    ],
  };
}

const fails =
  (status: number, code: string, text: RegExp) =>
  (error: unknown): boolean => {
    assert.ok(error instanceof SvcError, String(error));
    const details = error.details as { status: number; text: string };
    assert.equal(details.status, status, error.message);
    assert.equal(error.code, code, error.message);
    assert.match(details.text, text);
    return true;
  };

const consulFails =
  (status: number, text: RegExp) =>
  (error: unknown): boolean => {
    assert.ok(error instanceof ConsulError, String(error));
    assert.equal(error.status, status, error.message);
    assert.match(error.body, text);
    return true;
  };

describe("what real Nomad and Consul answer svc's clients, errors included", function () {
  this.timeout(180_000);
  const cluster = useCluster(this);
  let nomad: NomadClient;
  let nomadAddress = '';
  let consulAddress = '';
  let consulToken = '';
  const consuls: ConsulClient[] = [];
  const consul = (token: string | undefined): ConsulClient => {
    const made = new ConsulClient({ address: consulAddress, token });
    consuls.push(made);
    return made;
  };

  before(async () => {
    const env = (await cluster()).svcEnv();
    nomadAddress = env.NOMAD_ADDR!;
    consulAddress = env.CONSUL_HTTP_ADDR!;
    consulToken = env.CONSUL_HTTP_TOKEN!;
    nomad = new NomadClient({ url: nomadAddress, token: env.NOMAD_TOKEN, namespace: NAMESPACE });
  });
  after(() => {
    for (const made of consuls) made.close();
  });

  it('Nomad: a job read before it exists, registered with EnforceIndex (and refused three ways), scaled, its allocation and logs read, purged', async () => {
    const path = `/v1/job/${JOB}`;
    await assert.rejects(nomad.get(path), fails(404, 'not_found', /^job not found$/));
    await assert.rejects(
      nomad.put(path, { Job: sleeper(1, 'ready'), EnforceIndex: true, JobModifyIndex: 7, PreserveCounts: true }),
      fails(500, 'conflict', /^Enforcing job modify index 7: job does not exist$/),
    );
    const registered = await nomad.put<{ EvalID: string; JobModifyIndex: number }>(path, {
      Job: sleeper(1, 'ready'),
      EnforceIndex: true,
      JobModifyIndex: 0,
      PreserveCounts: false,
    });
    assert.ok(registered.index > 0 && registered.body.JobModifyIndex > 0);
    await assert.rejects(
      nomad.put(path, { Job: sleeper(1, 'ready'), EnforceIndex: true, JobModifyIndex: 0, PreserveCounts: false }),
      fails(500, 'conflict', /^Enforcing job modify index 0: job already exists$/),
    );
    const read = (await nomad.get<{ JobModifyIndex: number }>(path)).body.JobModifyIndex;
    await nomad.put(path, { Job: sleeper(1, 'ready again'), EnforceIndex: true, JobModifyIndex: read, PreserveCounts: true });
    await assert.rejects(
      nomad.put(path, { Job: sleeper(1, 'ready'), EnforceIndex: true, JobModifyIndex: read, PreserveCounts: true }),
      fails(500, 'conflict', /^Enforcing job modify index \d+: job exists with conflicting job modify index: \d+$/),
    );

    const first = await nomad.get<{ ID: string; ClientStatus: string }[]>(`${path}/allocations`);
    const running = await until(
      'the sleeper runs',
      async () => {
        const { body } = await nomad.get<{ ID: string; ClientStatus: string }[]>(
          `${path}/allocations`,
          {},
          { index: first.index, waitMs: 5_000 },
        );
        return body.find((a) => a.ClientStatus === 'running');
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const allocation = await nomad.get<{ AllocatedResources: { Shared: { Ports: unknown[] } } }>(`/v1/allocation/${running.ID}`);
    assert.equal(allocation.body.AllocatedResources.Shared.Ports.length, 1);
    await until(
      'the task printed its line',
      async () =>
        /ready again/.test(
          await nomad.text(`/v1/client/fs/logs/${running.ID}`, {
            task: 'sleeper',
            type: 'stdout',
            plain: true,
            origin: 'end',
            offset: 65536,
          }),
        ),
      { timeoutMs: 30_000 },
    );
    await assert.rejects(nomad.get(`/v1/allocation/${randomUUID()}`), fails(404, 'not_found', /^alloc not found$/));
    await assert.rejects(
      nomad.text(`/v1/client/fs/logs/${randomUUID()}`, { task: 'sleeper', type: 'stdout', plain: true, origin: 'end', offset: 65536 }),
      fails(404, 'not_found', /Unknown allocation/),
    );

    const listed = await nomad.get<{ ID: string; Meta: Record<string, string> }[]>('/v1/jobs', { prefix: 'svc-', meta: true });
    assert.deepEqual(
      listed.body.map((j) => [j.ID, j.Meta.svc_unit]),
      [[JOB, 'answers/capture/sleeper']],
    );
    const plan = await nomad.post<{ Diff: { Type: string } }>(`${path}/plan`, { Job: sleeper(1, 'planned'), Diff: true });
    assert.equal(plan.body.Diff.Type, 'Edited');

    await nomad.post(`${path}/scale`, { Count: 0, Target: { Job: JOB, Group: 'sleeper' }, Message: 'svc: scale to 0' });
    await assert.rejects(
      nomad.post(`${path}/scale`, { Count: 1, Target: { Job: JOB, Group: 'nope' }, Message: 'svc: scale nope' }),
      fails(400, 'nomad_rejected', /task group "nope" specified for scaling does not exist in job/),
    );
    await assert.rejects(
      nomad.post('/v1/job/svc-answers--missing/scale', {
        Count: 1,
        Target: { Job: 'svc-answers--missing', Group: 'g' },
        Message: 'svc: scale',
      }),
      fails(404, 'not_found', /not found/),
    );
    const events = await nomad.get<{ TaskGroups: Record<string, { Events: { Message: string }[] }> }>(`${path}/scale`);
    assert.equal(events.body.TaskGroups.sleeper!.Events[0]!.Message, 'svc: scale to 0');

    await nomad.delete(path, { purge: true });
    const gone = await nomad.delete<{ EvalID: string }>('/v1/job/svc-answers--missing', { purge: true });
    assert.equal(gone.body.EvalID, '', 'purging an unknown job is no error');
    await assert.rejects(nomad.get(path), fails(404, 'not_found', /^job not found$/));
  });

  it('Nomad: ACL denials, for no token and for an unknown one (the same text)', async () => {
    await assert.rejects(
      new NomadClient({ url: nomadAddress, namespace: NAMESPACE }).get('/v1/jobs', { prefix: 'svc-', meta: true }),
      fails(403, 'forbidden', /^Permission denied$/),
    );
    // Nomad 1.11 no longer says `ACL token not found`: an unknown secret is denied like no token (nomad/auth/auth.go Authenticate).
    await assert.rejects(
      new NomadClient({ url: nomadAddress, token: randomUUID(), namespace: NAMESPACE }).get('/v1/jobs', { prefix: 'svc-', meta: true }),
      fails(403, 'forbidden', /^Permission denied$/),
    );
  });

  it('Consul: CAS false, a missing key, a blocking read, a lock, a renew of an unknown session, ACL denials', async () => {
    const svc = consul(consulToken);
    assert.equal(await svc.kvSet('svc/answers/cas', Buffer.from('1'), { cas: 0 }), true);
    assert.equal(await svc.kvSet('svc/answers/cas', Buffer.from('2'), { cas: 0 }), false);
    const [entry] = (await svc.kvGet('svc/answers/cas')).value;
    assert.equal(await svc.kvSet('svc/answers/cas', Buffer.from('3'), { cas: entry!.ModifyIndex }), true);
    assert.equal(await svc.kvSet('svc/answers/cas', Buffer.from('4'), { cas: entry!.ModifyIndex }), false, 'a stale ModifyIndex');
    assert.equal(await svc.kvDelete('svc/answers/cas', { cas: entry!.ModifyIndex }), false);
    const missing = await svc.kvGet('svc/answers/missing');
    assert.deepEqual(missing.value, []);

    const listed = await svc.kvGet('svc/answers/', { recurse: true });
    const woke = svc.kvGet('svc/answers/', { recurse: true, block: { index: listed.index!, waitMs: 30_000 } });
    await svc.kvSet('svc/answers/woke', Buffer.from('x'));
    assert.ok((await woke).index! > listed.index!);
    assert.deepEqual((await svc.kvKeys('svc/answers/', { separator: '/' })).value, ['svc/answers/cas', 'svc/answers/woke']);
    const services = await svc.healthService('svc-answers-none');
    assert.deepEqual((await svc.healthService('svc-answers-none', { block: { index: services.index!, waitMs: 100 } })).value, []);

    const session = await svc.sessionCreate({ name: 'svc-answers', ttl: '10s', behavior: 'release', lockDelay: '0s' });
    assert.equal(await svc.kvSet('svc/answers/lock', Buffer.from('me'), { acquire: session }), true);
    await svc.sessionRenew(session);
    assert.equal(await svc.kvSet('svc/answers/lock', Buffer.alloc(0), { release: session }), true);
    await svc.sessionDestroy(session);
    await assert.rejects(svc.sessionRenew(session), consulFails(404, /^Session id '.+' not found$/));
    await assert.rejects(svc.sessionRenew(randomUUID()), consulFails(404, /^Session id '.+' not found$/));
    await assert.rejects(svc.kvSet('svc/answers/lock', Buffer.from('me'), { acquire: session }), consulFails(500, /invalid session/));
    await svc.kvDelete('svc/answers/', { recurse: true });

    await assert.rejects(consul(randomUUID()).kvGet('svc/answers/cas'), consulFails(403, /^ACL not found$/));
    await assert.rejects(
      consul(undefined).kvSet('svc/answers/cas', Buffer.from('1')),
      consulFails(403, /^Permission denied: anonymous token lacks permission 'key:write' on "svc\/answers\/cas"/),
    );
  });
});
