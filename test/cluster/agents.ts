/**
 * Real Consul and Nomad agents for the opt-in cluster suite (`npm run
 * test:cluster`), started the way docs/operators.md tells an operator: the
 * shipped `config/consul-agent.hcl` and `config/nomad-agent.hcl`, ACLs
 * bootstrapped, the policies of `config/policies/` and nothing more, svc's
 * workload jobs in their own namespace. A second config file per agent only
 * moves it onto loopback ports of its own and a temporary data dir, so a run
 * never touches an operator's agents. The binaries come from `CONSUL_BIN` and
 * `NOMAD_BIN`, else PATH; svc's repository builds neither.
 *
 * `SVC_RECORD_AGENTS=<dir>` puts a recorder (recorder.ts) between the agents
 * and their clients (svc, the Consul client's test) and writes what it saw
 * into `<dir>/nomad.json` and `<dir>/consul.json` on close, as the scenario
 * `SVC_RECORD_SCENARIO` (default `cluster`): test/fixtures/agents/.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, createWriteStream, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot, sdkPythonPath } from '../../core/model/paths.js';
import { freePort } from '../helpers/free-port.js';
import { TEST_SECRETS_KEY, tempDir } from '../helpers/config.js';
import { until } from '../helpers/until.js';
import { writeScenario, type AgentName } from './agent-fixtures.js';
import { startRecorder, type Recorder } from './recorder.js';

export const NAMESPACE = 'svc';
/**
 * The interpreter svc's exec tasks run (through the image environments built
 * from it): exec tasks run as `nobody` in a chroot, so it must live where
 * `nobody` may read, unlike a pyenv under /root. `SVC_CLUSTER_PYTHON` names another.
 */
export const clusterPython = process.env.SVC_CLUSTER_PYTHON ?? '/usr/bin/python3';
/** svc's cache dir for the suite: image environments built from `clusterPython`, not the tests' own Python. */
const clusterCacheDir = path.join(packageRoot, '.cache', 'svc-cluster');
const policies = path.join(packageRoot, 'config', 'policies');

export interface AgentBinaries {
  readonly consul: string;
  readonly nomad: string;
}

/** The agents' binaries, or why the suite cannot run. */
export function findAgentBinaries(): AgentBinaries | { readonly missing: string } {
  const consul = findBinary('CONSUL_BIN', 'consul');
  const nomad = findBinary('NOMAD_BIN', 'nomad');
  const missing = [
    consul === null ? 'consul (set CONSUL_BIN or put consul on PATH)' : '',
    nomad === null ? 'nomad (set NOMAD_BIN or put nomad on PATH)' : '',
  ].filter(Boolean);
  if (missing.length > 0) return { missing: missing.join(' and ') };
  if (process.getuid?.() !== 0) return { missing: "root: Nomad's exec driver needs it (run the suite as root)" };
  return { consul: consul!, nomad: nomad! };
}

/** The binary `variable` names, else `name` on PATH, else null. */
export function findBinary(variable: string, name: string): string | null {
  const named = process.env[variable];
  if (named !== undefined && named !== '') return named;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* next */
    }
  }
  return null;
}

export function agentVersion(binary: string): string {
  return execFileSync(binary, ['version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
}

/** One agent process that a test can pause, kill and start again on the same data. */
export class AgentProcess {
  #child: ChildProcess | null = null;
  constructor(
    readonly name: string,
    readonly binary: string,
    readonly args: readonly string[],
    readonly logFile: string,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  start(): void {
    const log = createWriteStream(this.logFile, { flags: 'a' });
    const child = spawn(this.binary, [...this.args], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    this.#child = child;
  }

  /** Sends `signal` without waiting: SIGSTOP freezes the agent (connections accepted, nothing answered), SIGCONT thaws it. */
  signal(signal: NodeJS.Signals): void {
    this.#child?.kill(signal);
  }

  /** Sends `signal` and waits for the process to end. */
  async stop(signal: NodeJS.Signals = 'SIGINT', timeoutMs = 30_000): Promise<void> {
    const child = this.#child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGCONT');
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await ended;
    clearTimeout(timer);
    this.#child = null;
  }

  tail(lines = 40): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }
}

export interface ConsulAgent {
  /** Where clients reach the agent (through the recorder when recording). */
  readonly url: string;
  /** The agent's own HTTP address, for Nomad's `consul` block. */
  readonly address: string;
  readonly process: AgentProcess;
  /** The node's name (`svc-test-<pid>`), which Consul's ACL denials quote. */
  readonly node: string;
  /** The management token of the bootstrap, for the test's own look-ups. */
  readonly rootToken: string;
  /** Creates the policy of `config/policies/<policyFile>` as `name` and a token holding only it; resolves with its secret. */
  token(name: string, policyFile: string): Promise<string>;
  /** GET with the management token. */
  get(p: string): Promise<any>;
  stop(): Promise<void>;
}

/**
 * A Consul server from the shipped `config/consul-agent.hcl` on loopback
 * ports of its own: ACLs bootstrapped, and the agent's own token set, as the
 * operator guide says.
 */
export async function startConsul(binary: string, dir = tempDir('svc-consul-')): Promise<ConsulAgent> {
  const [http, server, serfLan, serfWan] = await ports(4);
  const url = `http://127.0.0.1:${http}`;
  const node = `svc-test-${process.pid}`;
  writeFileSync(
    path.join(dir, 'consul-local.hcl'),
    [
      `node_name = "${node}"`,
      'client_addr = "127.0.0.1"',
      `ports {\n  http = ${http}\n  server = ${server}\n  serf_lan = ${serfLan}\n  serf_wan = ${serfWan}\n  dns = -1\n  grpc = -1\n  grpc_tls = -1\n}`,
    ].join('\n'),
  );
  const agent = new AgentProcess(
    'consul',
    binary,
    [
      'agent',
      `-config-file=${path.join(packageRoot, 'config', 'consul-agent.hcl')}`,
      `-config-file=${path.join(dir, 'consul-local.hcl')}`,
      `-data-dir=${path.join(dir, 'consul')}`,
    ],
    path.join(dir, 'consul.log'),
    agentEnv(),
  );
  agent.start();
  await until(
    'Consul has a leader',
    async () => {
      const response = await fetch(`${url}/v1/status/leader`).catch(() => null);
      return response?.ok === true && (await response.json()) !== '';
    },
    { timeoutMs: 60_000, intervalMs: 200, context: () => agent.tail() },
  );
  const rootToken = (await send(url, 'PUT', '/v1/acl/bootstrap', undefined, 'consul')).SecretID as string;
  const tokens = new Map([[rootToken, 'management']]);
  const token = async (name: string, policyFile: string) => {
    await send(
      url,
      'PUT',
      '/v1/acl/policy',
      { Name: name, Rules: readFileSync(path.join(policies, policyFile), 'utf8') },
      'consul',
      rootToken,
    );
    const secret = (await send(url, 'PUT', '/v1/acl/token', { Description: name, Policies: [{ Name: name }] }, 'consul', rootToken))
      .SecretID as string;
    tokens.set(secret, name);
    return secret;
  };
  await send(url, 'PUT', '/v1/agent/token/agent', { Token: await token('consul-agent', 'consul-agent.hcl') }, 'consul', rootToken);
  const recorder = recordDir === undefined ? null : await startRecorder(url, { tokens, counter: recordCounter });
  return {
    url: recorder?.url ?? url,
    address: url,
    process: agent,
    node,
    rootToken,
    token,
    get: (p) => send(url, 'GET', p, undefined, 'consul', rootToken),
    async stop() {
      const answered = recorder?.exchanges.length ?? 0;
      await agent.stop('SIGINT');
      await saveRecording(recorder, answered, 'consul', binary);
    },
  };
}

export interface Cluster {
  readonly consul: ConsulAgent;
  readonly nomadUrl: string;
  readonly nomad: AgentProcess;
  /** Nomad's management token, for the test's own look-ups. */
  readonly nomadRoot: string;
  /** The Nomad agent's data dir (a CSI plugin's staging folders are below it). */
  readonly nomadDataDir: string;
  readonly versions: { readonly consul: string; readonly nomad: string };
  /** The environment `svc server` runs with against these agents: svc's least-privilege tokens, the exec driver, the svc namespace. */
  svcEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** GET on Consul or Nomad with the management token. */
  consulGet(p: string): Promise<any>;
  nomadGet(p: string): Promise<any>;
  /** Purges svc's jobs, stops Nomad and Consul, and kills any task Nomad's client left running. */
  close(): Promise<void>;
}

export async function startCluster(binaries: AgentBinaries): Promise<Cluster> {
  const dir = tempDir('svc-cluster-');
  const consul = await startConsul(binaries.consul, dir);

  try {
    return await startNomad(binaries, dir, consul);
  } catch (error) {
    await consul.stop();
    killProcessesNaming(dir);
    throw error;
  }
}

async function startNomad(binaries: AgentBinaries, dir: string, consul: ConsulAgent): Promise<Cluster> {
  const nomadConsulToken = await consul.token('nomad-agent', 'nomad-agent-consul.hcl');
  const svcConsulToken = await consul.token('svc', 'svc-consul.hcl');
  const [nomadHttp, nomadRpc, nomadSerf] = await ports(3);
  const nomadUrl = `http://127.0.0.1:${nomadHttp}`;
  writeFileSync(
    path.join(dir, 'nomad-local.hcl'),
    [
      'bind_addr = "127.0.0.1"',
      'advertise {\n  http = "127.0.0.1"\n  rpc = "127.0.0.1"\n  serf = "127.0.0.1"\n}',
      `ports {\n  http = ${nomadHttp}\n  rpc = ${nomadRpc}\n  serf = ${nomadSerf}\n}`,
      `consul {\n  address = "${new URL(consul.address).host}"\n  token = "${nomadConsulToken}"\n}`,
      `client {\n  chroot_env {\n${chrootEnv()
        .map(([from, to]) => `    ${JSON.stringify(from)} = ${JSON.stringify(to)}`)
        .join('\n')}\n  }\n}`,
    ].join('\n'),
  );
  const nomad = new AgentProcess(
    'nomad',
    binaries.nomad,
    [
      'agent',
      `-config=${path.join(packageRoot, 'config', 'nomad-agent.hcl')}`,
      `-config=${path.join(dir, 'nomad-local.hcl')}`,
      `-data-dir=${path.join(dir, 'nomad')}`,
    ],
    path.join(dir, 'nomad.log'),
    agentEnv(),
  );
  nomad.start();
  await until('Nomad answers', async () => (await fetch(`${nomadUrl}/v1/agent/health`).catch(() => null))?.ok === true, {
    timeoutMs: 60_000,
    intervalMs: 250,
    context: () => nomad.tail(),
  });
  const nomadRoot = (await send(nomadUrl, 'POST', '/v1/acl/bootstrap', undefined, 'nomad')).SecretID as string;
  await send(nomadUrl, 'POST', `/v1/namespace/${NAMESPACE}`, { Name: NAMESPACE, Description: 'svc workload jobs' }, 'nomad', nomadRoot);
  await send(
    nomadUrl,
    'POST',
    '/v1/acl/policy/svc',
    { Name: 'svc', Description: 'svc', Rules: readFileSync(path.join(policies, 'svc-nomad.hcl'), 'utf8') },
    'nomad',
    nomadRoot,
  );
  const svcNomadToken = (
    await send(nomadUrl, 'POST', '/v1/acl/token', { Name: 'svc', Type: 'client', Policies: ['svc'] }, 'nomad', nomadRoot)
  ).SecretID as string;
  const recorder =
    recordDir === undefined
      ? null
      : await startRecorder(nomadUrl, {
          tokens: new Map([
            [svcNomadToken, 'svc'],
            [nomadRoot, 'management'],
          ]),
          counter: recordCounter,
        });

  const nomadGet = (p: string) => send(nomadUrl, 'GET', p, undefined, 'nomad', nomadRoot);
  await until(
    "Nomad's client is ready with a healthy exec driver",
    async () => {
      const nodes = (await nomadGet('/v1/nodes')) as { ID: string; Status: string }[];
      if (nodes[0]?.Status !== 'ready') return false;
      const node = await nomadGet(`/v1/node/${nodes[0].ID}`);
      return node.Drivers?.exec?.Healthy === true;
    },
    { timeoutMs: 90_000, intervalMs: 500, context: () => nomad.tail() },
  );

  return {
    consul,
    nomadUrl,
    nomad,
    nomadRoot,
    nomadDataDir: path.join(dir, 'nomad'),
    versions: { consul: agentVersion(binaries.consul), nomad: agentVersion(binaries.nomad) },
    svcEnv: (extra = {}) => ({
      ...process.env,
      // 100 MHz per core: every workload of the suite fits on one client (with 2000, two cores hold two).
      SVC_MHZ_PER_CORE: '100',
      SVC_SCHEDULER: 'nomad',
      SVC_STATE: 'consul',
      SVC_SECRETS_KEY: TEST_SECRETS_KEY,
      SVC_NOMAD_DRIVER: 'exec',
      SVC_NOMAD_NAMESPACE: NAMESPACE,
      NOMAD_ADDR: recorder?.url ?? nomadUrl,
      NOMAD_TOKEN: svcNomadToken,
      CONSUL_HTTP_ADDR: consul.url,
      CONSUL_HTTP_TOKEN: svcConsulToken,
      // The image builder takes `python3.X` from PATH first: the cluster's interpreter must win.
      SVC_CACHE_DIR: clusterCacheDir,
      SVC_PYTHON: clusterPython,
      PATH: `${path.dirname(clusterPython)}${path.delimiter}${process.env.PATH ?? ''}`,
      ...extra,
    }),
    consulGet: consul.get,
    nomadGet,
    async close() {
      const jobs = (await nomadGet(`/v1/jobs?namespace=${NAMESPACE}`).catch(() => [])) as { ID: string }[];
      for (const job of jobs)
        await send(
          nomadUrl,
          'DELETE',
          `/v1/job/${encodeURIComponent(job.ID)}?purge=true&namespace=${NAMESPACE}`,
          undefined,
          'nomad',
          nomadRoot,
        ).catch(() => undefined);
      await until(
        "svc's allocations stopped",
        async () => {
          const allocations = (await nomadGet(`/v1/allocations?namespace=${NAMESPACE}`).catch(() => [])) as { ClientStatus: string }[];
          return allocations.every((a) => a.ClientStatus !== 'running' && a.ClientStatus !== 'pending');
        },
        { timeoutMs: 60_000 },
      ).catch(() => undefined);
      const answered = recorder?.exchanges.length ?? 0;
      await nomad.stop('SIGINT');
      await saveRecording(recorder, answered, 'nomad', binaries.nomad);
      await consul.stop();
      // Nomad's client leaves tasks running when it stops (by design); a run cut short never purged them.
      killProcessesNaming(dir);
    },
  };
}

/**
 * What an exec task sees (Nomad's `chroot_env`): the default set copies all
 * of /usr into every allocation, which takes tens of seconds per container
 * here. svc's tasks need only the interpreter, its libraries, svc's image
 * environments (the cache dir) and the SDK (`runtimePath`).
 */
function chrootEnv(): [string, string][] {
  const python = clusterPython;
  const facts = JSON.parse(
    execFileSync(
      python,
      [
        '-c',
        'import json, os, sys, sysconfig; print(json.dumps({"exe": os.path.realpath(sys._base_executable), "stdlib": sysconfig.get_paths()["stdlib"]}))',
      ],
      { encoding: 'utf8' },
    ),
  ) as { exe: string; stdlib: string };
  mkdirSync(clusterCacheDir, { recursive: true, mode: 0o755 });
  const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';
  // With a merged /usr, /lib and /lib64 are symlinks that Nomad would follow and copy whole:
  // the loader and the libraries go straight to the paths the ELF header and ld.so.cache name.
  const paths = ['/etc', facts.stdlib, facts.exe, clusterCacheDir, sdkPythonPath];
  return [
    ...[...new Set(paths)].map((p): [string, string] => [p, p]),
    [`/usr/lib/${arch}-linux-gnu`, `/lib/${arch}-linux-gnu`],
    ['/usr/lib64', '/lib64'],
    // A shell and the commands `svc container exec` and `svc shell` are tested with: Nomad's exec of a command
    // the task's root lacks waits until its time-out without a terminal, so each must be there.
    ['/usr/bin/dash', '/bin/sh'],
    ...['ls', 'ps', 'stty'].map((command): [string, string] => [`/usr/bin/${command}`, `/bin/${command}`]),
  ];
}

function agentEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  // Nomad's AWS fingerprinter fails with this set on a machine that is no cloud instance; the tokens are the test's, not the agents'.
  delete env.AWS_CA_BUNDLE;
  delete env.CONSUL_HTTP_TOKEN;
  delete env.NOMAD_TOKEN;
  return env;
}

/**
 * SIGKILLs every process whose command line names `dir` (the agents, Nomad's
 * executors) or that holds a file below it open (logmon and the tasks, which
 * write their logs there; an exec task's own root is its chroot, so its
 * command line names nothing of ours).
 */
function killProcessesNaming(dir: string): void {
  const ours = (pid: string) => {
    if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) return true;
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(dir);
      } catch {
        return false;
      }
    });
  };
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)) {
    try {
      if (ours(pid)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      /* gone already, or not ours to read */
    }
  }
}

const recordDir = process.env.SVC_RECORD_AGENTS || undefined;
/** One order for the exchanges of both agents. */
const recordCounter = { next: 0 };

/** Writes the exchanges answered before the agent was told to stop (what a stopping agent answers is not its API's). */
async function saveRecording(recorder: Recorder | null, answered: number, agent: AgentName, binary: string): Promise<void> {
  if (recorder === null || recordDir === undefined) return;
  await recorder.close();
  writeScenario(
    recordDir,
    agent,
    process.env.SVC_RECORD_SCENARIO || 'cluster',
    agentVersion(binary),
    recorder.exchanges.slice(0, answered),
  );
}

async function ports(count: number): Promise<number[]> {
  const found = new Set<number>();
  while (found.size < count) found.add(await freePort());
  return [...found];
}

async function send(base: string, method: string, p: string, body: unknown, agent: 'consul' | 'nomad', token?: string): Promise<any> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers[agent === 'consul' ? 'x-consul-token' : 'x-nomad-token'] = token;
  const response = await fetch(`${base}${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${agent} answered ${method} ${p} with ${response.status}: ${text}`);
  return text === '' ? null : JSON.parse(text);
}
