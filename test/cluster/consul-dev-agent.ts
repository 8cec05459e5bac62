/**
 * A real Consul agent for opt-in tests: `consul agent -dev` (in memory) on
 * loopback ports of its own, with ACLs on and default deny, so the tests see
 * Consul's own answers, denials included. The binary is `CONSUL_BIN`, else
 * `consul` on PATH; without either `consulBinary()` is null and the suite
 * skips itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { freePort } from '../helpers/free-port.js';
import { until } from '../helpers/until.js';

export interface ConsulDevAgent {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The initial management token: may do anything. */
  readonly managementToken: string;
  /** The agent's node name. */
  readonly node: string;
  stop(): Promise<void>;
}

export function consulBinary(): string | null {
  if (process.env.CONSUL_BIN !== undefined && process.env.CONSUL_BIN !== '') return process.env.CONSUL_BIN;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, 'consul'), constants.X_OK);
      return join(dir, 'consul');
    } catch {
      // not in this folder
    }
  }
  return null;
}

export async function startConsulDevAgent(binary: string): Promise<ConsulDevAgent> {
  const [http, serfLan, serfWan, server] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const managementToken = 'svc-test-management-token';
  const node = `svc-test-${process.pid}`;
  const child: ChildProcess = spawn(binary, [
    'agent', '-dev', '-node', node, '-bind', '127.0.0.1', '-client', '127.0.0.1',
    '-http-port', String(http), '-dns-port', '-1', '-grpc-port', '-1', '-serf-lan-port', String(serfLan), '-serf-wan-port', String(serfWan), '-server-port', String(server),
    '-hcl', 'ports { grpc_tls = -1 }',
    // The agent token lets the agent sync its own services to the catalog: without one a deregistration is
    // answered 200 but blocked by ACLs at sync, and the instance stays listed.
    '-hcl', `acl { enabled = true, default_policy = "deny", tokens { initial_management = "${managementToken}", agent = "${managementToken}" } }`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4000); });
  child.stderr?.on('data', (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4000); });
  const url = `http://127.0.0.1:${http}`;
  // Ready once a management call works: a leader is elected and the ACL system has its token.
  await until('the Consul dev agent to answer with a leader and ACLs', async () => {
    const response = await fetch(`${url}/v1/kv/svc-test-ready`, { headers: { 'X-Consul-Token': managementToken } });
    return response.status === 404;
  }, { timeoutMs: 60_000, intervalMs: 100, context: () => output, abort: () => (child.exitCode === null ? undefined : `consul exited with ${child.exitCode}`) });
  return {
    url, managementToken, node,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    },
  };
}
