/**
 * Leader election against the Consul stand-in over real HTTP. The stand-in
 * enforces Consul's 10 s minimum TTL, so the renew-failure case takes ~10 s.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { startLeaderElection, LeadershipLostError, type LeaderElection } from '../../../../core/traffic/cluster/leader.js';
import { startConsulStandin, type ConsulStandin } from '../../../standins/consul/index.js';
import { until } from '../../../helpers/until.js';

interface Replica {
  readonly name: string;
  readonly election: LeaderElection;
  readonly events: string[];
  signal: AbortSignal | undefined;
  sessionAliveAtDemotion: boolean | undefined;
}

/** How long a wait of these tests may last (a bound on a hang: the renew-failure case alone takes ~10 s). */
const WAIT_MS = 40_000;

describe('leader election (Consul session + lock key)', function () {
  this.timeout(120_000);
  let consul: ConsulStandin;
  let replicas: Replica[];
  let violations: string[];
  let errors: unknown[];
  let poll: NodeJS.Timeout;

  const leaders = (): Replica[] => replicas.filter((r) => r.election.isLeader());
  const check = (when: string): void => {
    const now = leaders();
    if (now.length > 1) violations.push(`${when}: ${now.map((r) => r.name).join(' and ')} both lead`);
  };
  const heldBy = (): string => consul.state.kv.get('svc/leader')?.Session ?? '';

  function start(name: string): Replica {
    const replica: Replica = {
      name,
      events: [],
      signal: undefined,
      sessionAliveAtDemotion: undefined,
      election: undefined as unknown as LeaderElection,
    };
    (replica as { election: LeaderElection }).election = startLeaderElection({
      consul: { address: consul.url },
      key: 'svc/leader',
      ttlSeconds: 10,
      lockDelaySeconds: 1,
      advertise: `http://${name}:8080`,
      onElected(signal) {
        replica.signal = signal;
        replica.events.push('elected');
        check(`${name} elected`);
      },
      onDemoted(reason, cutOff) {
        if (replica.signal?.aborted !== true) violations.push(`${name}: onDemoted before its signal aborted`);
        replica.sessionAliveAtDemotion = consul.state.sessions.has(heldBy());
        replica.events.push(`demoted${cutOff ? ' (cut off)' : ''}: ${reason}`);
        check(`${name} demoted`);
      },
      report: (error) => errors.push(error),
    });
    replicas.push(replica);
    return replica;
  }

  beforeEach(async () => {
    consul = await startConsulStandin({ jitter: false });
    replicas = [];
    violations = [];
    errors = [];
    poll = setInterval(() => check('poll'), 10);
  });

  afterEach(async () => {
    clearInterval(poll);
    await Promise.all(replicas.map((r) => r.election.close()));
    await consul.close();
    assert.deepEqual(violations, []);
  });

  it('elects exactly one of two replicas and names it in the lock key', async () => {
    const a = start('a');
    const b = start('b');
    await until('a leader', () => leaders().length === 1, WAIT_MS);
    const leader = leaders()[0]!;
    const other = leader === a ? b : a;
    assert.equal(other.election.isLeader(), false);
    assert.equal(leader.signal?.aborted, false);
    const entry = consul.state.kv.get('svc/leader');
    assert.ok(entry !== undefined && entry.Session !== '');
    const session = consul.state.sessions.get(entry.Session);
    assert.equal(session?.TTL, '10s');
    assert.equal(session?.Behavior, 'release');
    assert.equal(session?.LockDelayMs, 1000);
    assert.deepEqual(JSON.parse(entry.Value.toString('utf8')), {
      hostname: hostname(),
      pid: process.pid,
      address: `http://${leader.name}:8080`,
    });
    // It stays that way across a renewal (TTL/3 = 3.3 s).
    await new Promise((resolve) => setTimeout(resolve, 4000));
    assert.deepEqual(leaders(), [leader]);
    assert.ok(consul.requests.some((r) => r.path.startsWith('/v1/session/renew/') && r.status === 200));
    assert.deepEqual(other.events, []);
    assert.equal(leader.election.leaderAddress(), `http://${leader.name}:8080`, 'the leader knows it leads');
    assert.equal(
      other.election.leaderAddress(),
      `http://${leader.name}:8080`,
      'the other reads the address from the lock key (followers forward the API there)',
    );
  });

  it('hands over at once when the leader closes (release, destroy)', async () => {
    const a = start('a');
    const b = start('b');
    await until('a leader', () => leaders().length === 1, WAIT_MS);
    const first = leaders()[0]!;
    const second = first === a ? b : a;
    const firstSession = heldBy();
    await first.election.close();
    assert.equal(first.election.isLeader(), false);
    assert.equal(first.signal?.aborted, true);
    assert.ok(first.signal?.reason instanceof LeadershipLostError);
    assert.deepEqual(first.events, ['elected', 'demoted: closed']);
    assert.equal(consul.state.sessions.has(firstSession), false, 'the session is destroyed');
    assert.ok(
      consul.requests.some((r) => r.method === 'PUT' && r.path === '/v1/kv/svc/leader' && r.query.includes('release=')),
      'the lock is released',
    );
    await until('the other replica to lead', () => second.election.isLeader(), WAIT_MS);
    assert.notEqual(heldBy(), firstSession);
    assert.equal(second.election.leaderAddress(), `http://${second.name}:8080`);
  });

  it('demotes a leader whose session is destroyed behind its back; the other takes over', async () => {
    const a = start('a');
    const b = start('b');
    await until('a leader', () => leaders().length === 1, WAIT_MS);
    const first = leaders()[0]!;
    const second = first === a ? b : a;
    const response = await fetch(`${consul.url}/v1/session/destroy/${heldBy()}`, { method: 'PUT' });
    assert.equal(await response.text(), 'true');
    await until('the leader to be demoted', () => first.signal?.aborted === true, WAIT_MS);
    assert.equal(first.events.length, 2);
    assert.match(first.events[1]!, /^demoted: /);
    await until('the other replica to lead', () => second.election.isLeader(), WAIT_MS);
    // The demoted replica campaigns again with a new session and follows.
    await until('the first replica to hold a new session', () => consul.state.sessions.size === 2, WAIT_MS);
    assert.equal(first.election.isLeader(), false);
  });

  it('lets go at once of a session of this very process that still holds the key (a platform started again after Consul came back)', async () => {
    const put = async (p: string, body?: string) =>
      (await fetch(`${consul.url}${p}`, { method: 'PUT', ...(body === undefined ? {} : { body }) })).json();
    const stale = ((await put('/v1/session/create', JSON.stringify({ TTL: '60s', LockDelay: '0s' }))) as { ID: string }).ID;
    const value = JSON.stringify({ hostname: hostname(), pid: process.pid, address: 'http://a:8080' });
    assert.equal(await put(`/v1/kv/svc/leader?acquire=${stale}`, value), true);
    const started = Date.now();
    const a = start('a');
    await until('a leads with a new session', () => a.election.isLeader(), WAIT_MS);
    assert.ok(Date.now() - started < 10_000, `took over in ${Date.now() - started} ms, not after the old session's 60 s TTL`);
    assert.equal(consul.state.sessions.has(stale), false, 'the old session was destroyed');
    assert.notEqual(heldBy(), stale);
  });

  it('leaves alone a key another process holds with its own value', async () => {
    const put = async (p: string, body?: string) =>
      (await fetch(`${consul.url}${p}`, { method: 'PUT', ...(body === undefined ? {} : { body }) })).json();
    const other = ((await put('/v1/session/create', JSON.stringify({ TTL: '60s' }))) as { ID: string }).ID;
    assert.equal(
      await put(
        `/v1/kv/svc/leader?acquire=${other}`,
        JSON.stringify({ hostname: hostname(), pid: process.pid + 1, address: 'http://a:8080' }),
      ),
      true,
    );
    const a = start('a');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(a.election.isLeader(), false);
    assert.equal(heldBy(), other);
  });

  it('a leader whose renewals fail demotes itself within the TTL, before Consul invalidates the session', async () => {
    const a = start('a');
    const b = start('b');
    await until('a leader', () => leaders().length === 1, WAIT_MS);
    const first = leaders()[0]!;
    const second = first === a ? b : a;
    const session = heldBy();
    consul.failNext({ match: new RegExp(`^PUT /v1/session/renew/${session}$`), count: 1_000_000 });
    await until('the leader to demote itself', () => first.signal?.aborted === true, 30_000);
    // Cut off: nothing told it that another replica leads (svc server keeps serving its routes then).
    assert.match(first.events[1] ?? '', /^demoted \(cut off\): no session renewal succeeded for the TTL/);
    // The stand-in invalidates after 2 × TTL: the session still held the key when the leader stepped down.
    assert.equal(first.sessionAliveAtDemotion, true);
    assert.ok(
      errors.some((e) => /renew/.test(String(e))),
      'the failed renewals are reported',
    );
    // It then destroys the session (best effort), so the other replica takes over after the lock-delay.
    await until('the other replica to lead', () => second.election.isLeader(), WAIT_MS);
    assert.equal(first.election.isLeader(), false);
  });
});
