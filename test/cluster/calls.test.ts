/**
 * Batch and background calls on real Nomad and Consul (opt-in: `npm run
 * test:cluster`), driven by the Python SDK from a process with no source of
 * the app (`svc.Function.from_name`), as a user's script would:
 * - a `.starmap` whose allocation is killed (SIGKILL of its processes: the
 *   container crashed) while inputs are in flight: the inputs run again, on
 *   the task Nomad restarts, and every result comes back, in order;
 * - a `.spawn` and a `.spawn_map` recorded before the leading `svc server` is
 *   SIGKILLed: the other replica takes over and the results are read with
 *   `svc.FunctionCall.from_id(...)` from another process.
 * Two replicas sit behind one load balancer, their shared `publicUrl`, as in
 * failover.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot, sdkPythonPath } from '../../core/model/paths.js';
import { tempDir } from '../helpers/config.js';
import { until } from '../helpers/until.js';
import { clusterPython, NAMESPACE } from './agents.js';
import { useReplicas } from './replicas.js';
import { useCluster } from './suite.js';
import { svcCli } from './svc-process.js';

const callsApp = path.join(packageRoot, 'test', 'fixtures', 'cluster-calls', 'app.py');

interface Square {
  readonly x: number;
  readonly square: number;
  readonly alloc: string | null;
  readonly pid: number;
}

describe('svc on real Nomad and Consul: maps and spawned calls across a killed allocation and a leader change', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  const replicas = useReplicas(cluster);

  before(async () => {
    const ran = await svcCli(replicas.first, ['deploy', callsApp, '--json']);
    assert.equal(ran.code, 0, `${ran.stdout}\n${ran.stderr}\n${replicas.first.output.slice(-3000)}`);
  });

  /** Runs Python code with the SDK against the balancer, in a folder with no source of the app; its stdout. */
  function client(code: string, timeoutMs = 300_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(clusterPython, ['-c', code], {
        cwd: tempDir('svc-cluster-client-'),
        env: {
          ...process.env,
          PYTHONPATH: sdkPythonPath,
          SVC_SERVER: replicas.balancer.url,
          SVC_TOKEN: replicas.first.ownerToken,
          SVC_CONFIG_DIR: tempDir('svc-config-'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('exit', (exitCode) => {
        clearTimeout(timer);
        if (exitCode === 0) resolve(stdout);
        else reject(new Error(`the client exited ${exitCode}:\n${stdout}\n${stderr}`));
      });
    });
  }

  /** The running allocations of the jobs that run the app's `square` (its runs). */
  async function squareAllocations(): Promise<string[]> {
    const allocations = (await (await cluster()).nomadGet(`/v1/allocations?namespace=${NAMESPACE}`)) as {
      ID: string;
      JobID: string;
      ClientStatus: string;
    }[];
    return allocations
      .filter((a) => a.ClientStatus === 'running' && a.JobID.startsWith('svc-default--cluster-calls--') && a.JobID.endsWith('--square'))
      .map((a) => a.ID);
  }

  it("runs a map's inputs again when their allocation is killed mid-map: every result comes back, in order", async () => {
    const mapping = client(
      [
        'import json, svc',
        'square = svc.Function.from_name("cluster-calls", "square")',
        'print(json.dumps(list(square.starmap([(i, 0.4) for i in range(20)]))))',
      ].join('\n'),
    );
    const statuses = async () =>
      (await (
        await fetch(`${replicas.balancer.url}/api/v1/apps/cluster-calls/maps`, {
          headers: { Authorization: `Bearer ${replicas.first.ownerToken}` },
        })
      ).json()) as {
        maps: { inputs: { running: number; succeeded: number } }[];
      };
    await until('some inputs are done and others run', async () => {
      const inputs = (await statuses()).maps[0]?.inputs;
      return inputs !== undefined && inputs.succeeded >= 3 && inputs.running >= 1;
    });
    // A deployed function's calls run in a run of its own (a Nomad job started for them): its allocation exists now.
    const [allocation] = await squareAllocations();
    assert.ok(allocation, 'the run of square has a running allocation');
    const killed = killAllocationProcesses(allocation);
    assert.ok(killed.length > 0, `the processes of allocation ${allocation} were found and killed`);

    const results = JSON.parse(await mapping) as Square[];
    assert.deepEqual(
      results.map((r) => [r.x, r.square]),
      Array.from({ length: 20 }, (_, i) => [i, i * i]),
    );
    assert.ok(
      results.some((r) => !killed.includes(r.pid)),
      'some inputs ran in a process started after the kill (the restarted task)',
    );
  });

  it('keeps a spawned call and a spawn_map group across a SIGKILL of the leader: read from another process once the other replica leads', async () => {
    const ids = JSON.parse(
      await client(
        [
          'import json, svc',
          'square = svc.Function.from_name("cluster-calls", "square")',
          'one = square.spawn(7, seconds=3.0)',
          'group = square.spawn_map(range(6), kwargs={"seconds": 1.0})',
          'print(json.dumps([one.object_id, group.object_id]))',
        ].join('\n'),
      ),
    ) as [string, string];
    await replicas.first.stop('SIGKILL');
    await replicas.second.ready('ready', 180_000);
    const read = JSON.parse(
      await client(
        [
          'import json, svc',
          `one = svc.FunctionCall.from_id(${JSON.stringify(ids[0])}).get(timeout=240)`,
          `group = svc.FunctionCall.from_id(${JSON.stringify(ids[1])})`,
          'print(json.dumps({"one": one, "group": [group.get(index=i, timeout=240) for i in range(group.num_inputs())]}))',
        ].join('\n'),
      ).catch((error: Error) => {
        throw new Error(`${error.message}\nthe survivor's output:\n${replicas.second.output.slice(-6000)}`);
      }),
    ) as { one: Square; group: Square[] };
    assert.equal(read.one.square, 49);
    assert.deepEqual(
      read.group.map((r) => r.square),
      [0, 1, 4, 9, 16, 25],
    );
    const listed = await svcCli(replicas.second, ['app', 'calls', 'cluster-calls', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    const calls = (JSON.parse(listed.stdout) as { calls: { id: string; status: string }[] }).calls;
    assert.equal(calls.find((call) => call.id === ids[0])?.status, 'succeeded', listed.stdout);
  });
});

/** SIGKILLs every process Nomad runs for the allocation (its environment names it); their pids. */
function killAllocationProcesses(allocation: string): number[] {
  const killed: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (!environ.split('\0').includes(`NOMAD_ALLOC_ID=${allocation}`)) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
      killed.push(Number(entry));
    } catch {
      /* gone already */
    }
  }
  return killed;
}
