/**
 * Runs an allocation on this machine the way a Nomad client with the raw_exec driver would:
 * the alloc dir layout (`alloc/`, `<task>/local`, `<task>/secrets`, logs in `alloc/logs/<task>.stdout.0`),
 * artifacts into the task dir, each task as its own process group (the command with `${...}`
 * interpolated, the agent's environment + NOMAD_* + the task's Env), restarts per the restart policy,
 * and the group/task services registered in Consul while the allocation runs.
 */
import { spawn, execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { signalProcessGroup } from '../../../core/infra/processes/group.js';
import { type ConsulAgentClient, registration, serviceId } from './consul.js';
import { checkDockerTask, DockerTaskFailure, prepareContainer, pullImage, type DockerLaunch } from './docker-task.js';
import { removeRootfs } from './docker/container-rootfs.js';
import type { ImageSource } from './docker/image-source.js';
import { interpolate, nodeAttributes, nomadEnv, type AllocatedPort, type EnvInput } from './env.js';
import { goDuration, SECOND, type Json } from './job.js';
import { renderTemplates, type Variables } from './variables.js';

const run = promisify(execFile);

/** Every live task process group of every stand-in, killed if the test process exits. */
const liveGroups = new Set<number>();
process.on('exit', () => {
  for (const pgid of liveGroups) signalProcessGroup(pgid, 'SIGKILL');
});

export interface RunnerContext {
  readonly dataDir: string;
  readonly datacenter: string;
  readonly nodeName: string;
  readonly consul: ConsulAgentClient | null;
  /** Where docker tasks' images come from. */
  readonly imageSource: ImageSource;
  /** Called after every change of the allocation's client-side fields. */
  readonly changed: () => void;
  /** The cluster's Nomad Variables, which templates read. */
  readonly variables: Variables;
}

const signals = new Set(['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2']);

function event(type: string, fields: Json = {}): Json {
  return {
    Type: type,
    Time: Date.now() * 1_000_000,
    Message: '',
    DisplayMessage: fields.DisplayMessage ?? fields.Message ?? type,
    Details: {},
    ExitCode: 0,
    Signal: 0,
    KillTimeout: 0,
    KillError: '',
    KillReason: '',
    StartDelay: 0,
    DownloadError: '',
    ValidationError: '',
    DriverError: '',
    DriverMessage: '',
    FailsTask: false,
    RestartReason: '',
    // The real agent's events carry these too, empty when unused (Nomad 1.11.3 answered so).
    DiskLimit: 0,
    FailedSibling: '',
    GenericSource: '',
    SetupError: '',
    TaskSignal: '',
    TaskSignalReason: '',
    VaultError: '',
    ...fields,
  };
}

class TaskRunner {
  // `Paused` (the schedule block's state) is "" for a task without one, as Nomad 1.11.3 answered.
  readonly state: Json = {
    State: 'pending',
    Failed: false,
    Restarts: 0,
    LastRestart: null,
    StartedAt: null,
    FinishedAt: null,
    Events: [],
    Paused: '',
  };
  private pgid: number | null = null;
  private exited: Promise<void> = Promise.resolve();
  private stopping = false;
  private wake: (() => void) | null = null;
  private restartsInWindow: number[] = [];
  /** The variables of the task's `Envvars` templates, rendered at each start. */
  private templated: Record<string, string> = {};

  constructor(
    private readonly alloc: AllocRunner,
    readonly task: Json,
  ) {}

  private push(e: Json): void {
    this.state.Events.push(e);
    this.alloc.taskChanged();
  }

  get dir(): string {
    return path.join(this.alloc.dir, this.task.Name);
  }

  async run(): Promise<void> {
    this.push(event('Received', { DisplayMessage: 'Task received by client' }));
    for (const sub of ['local', 'secrets', 'tmp']) mkdirSync(path.join(this.dir, sub), { recursive: true });
    this.push(event('Task Setup', { Message: 'Building Task Directory', DisplayMessage: 'Building Task Directory' }));
    for (;;) {
      if (this.stopping) return;
      const failure = await this.startOnce();
      if (this.stopping) return;
      const decision = this.nextRestart(failure);
      if (decision === null) return;
      this.state.State = 'pending';
      this.state.Restarts += 1;
      this.state.LastRestart = new Date().toISOString();
      this.push(
        event('Restarting', {
          StartDelay: decision,
          DisplayMessage: `Task restarting in ${goDuration(decision)}`,
          RestartReason: 'Restart within policy',
        }),
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, decision / 1_000_000);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  /** Starts the task and waits for it to end; returns a description of the failure, or null for exit 0. */
  private async startOnce(): Promise<string | null> {
    const env = this.alloc.env(this.task);
    const node = this.alloc.node();
    const render = (text: string) => interpolate(text, env, node);
    try {
      if ((this.task.Artifacts ?? []).length > 0) {
        this.push(event('Downloading Artifacts', { DisplayMessage: 'Client is downloading artifacts' }));
        for (const artifact of this.task.Artifacts) await this.download(artifact, render);
      }
    } catch (error) {
      const message = (error as Error).message;
      this.push(event('Failed Artifact Download', { DownloadError: message, DisplayMessage: message, FailsTask: false }));
      return message;
    }
    try {
      // Nomad's template hook runs before the driver starts the task (prestart), for every driver.
      const { job, group } = this.alloc;
      this.templated = renderTemplates(
        this.task,
        this.dir,
        { namespace: job.Namespace ?? 'default', job: job.ParentID || job.ID, group: group.Name, task: this.task.Name },
        this.alloc.variables,
      );
    } catch (error) {
      const message = (error as Error).message;
      this.push(event('Template', { DisplayMessage: message }));
      return message;
    }
    if (this.task.Driver === 'docker') return this.startContainer(env, render);
    if (this.task.Driver !== 'raw_exec') {
      const message = `stand-in runs only raw_exec and docker tasks, not "${this.task.Driver}"`;
      this.failUnrecoverably(message);
      return message;
    }
    const config = this.task.Config ?? {};
    if (typeof config.command !== 'string' || !config.command) {
      const message = 'failed to decode driver config: missing required field "command"';
      this.failUnrecoverably(message);
      return message;
    }
    const command = render(config.command);
    const args = ((config.args ?? []) as unknown[]).map((a) => render(String(a)));
    const taskEnv = this.taskEnv(env, render);
    const cwd = config.work_dir ? path.resolve(this.dir, render(config.work_dir)) : this.dir;
    const resolved = command.includes('/') && !path.isAbsolute(command) ? path.join(this.dir, command) : command;
    return this.launch(resolved, args, cwd, { ...process.env, ...taskEnv });
  }

  /** Nomad's env with the task's Env (interpolated) over it, then its templates' variables (the env builder's template vars). */
  private taskEnv(env: Record<string, string>, render: (text: string) => string): Record<string, string> {
    const taskEnv: Record<string, string> = { ...env };
    for (const [k, v] of Object.entries(this.task.Env ?? {})) taskEnv[k] = render(String(v));
    return { ...taskEnv, ...this.templated };
  }

  /** A Driver Failure that fails the task without restarts (a config the driver cannot run). */
  private failUnrecoverably(message: string): void {
    this.push(event('Driver Failure', { DriverError: message, DisplayMessage: message, FailsTask: true }));
    this.fail(message);
    this.stopping = true;
  }

  /** The docker driver: pull, unpack a rootfs, run the container's process chrooted in it, remove the rootfs when it ends. */
  private async startContainer(env: Record<string, string>, render: (text: string) => string): Promise<string | null> {
    let launch: DockerLaunch;
    try {
      const config = checkDockerTask(this.task, this.alloc.ports);
      const image = render(config.image);
      this.push(event('Driver', { DriverMessage: 'Downloading image', DisplayMessage: 'Downloading image', Details: { image } }));
      const pulled = await pullImage(this.alloc.imageSource, image, config);
      if (this.stopping) return null;
      launch = await prepareContainer(this.dir, this.alloc.dir, config, pulled, this.taskEnv(env, render), render);
    } catch (error) {
      const message = (error as Error).message;
      if (error instanceof DockerTaskFailure && !error.recoverable) {
        this.failUnrecoverably(message);
      } else {
        this.push(event('Driver Failure', { DriverError: message, DisplayMessage: message }));
      }
      return message;
    }
    try {
      if (this.stopping) return null;
      return await this.launch(launch.file, launch.args, this.dir, launch.env);
    } finally {
      removeRootfs(launch.rootfs);
    }
  }

  /** Spawns the task's process as its own process group with stdout/stderr into the alloc's logs; waits for it to end. */
  private async launch(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string | null> {
    const logs = path.join(this.alloc.dir, 'alloc', 'logs');
    const out = openSync(path.join(logs, `${this.task.Name}.stdout.0`), 'a');
    const err = openSync(path.join(logs, `${this.task.Name}.stderr.0`), 'a');
    let child;
    try {
      child = spawn(file, args, { cwd, env, detached: true, stdio: ['ignore', out, err] });
    } finally {
      closeSync(out);
      closeSync(err);
    }
    const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: string }>((resolve) => {
      child.once('error', (error) => resolve({ code: null, signal: null, error: error.message }));
      child.once('spawn', () => {
        this.pgid = child.pid ?? null;
        if (this.pgid) liveGroups.add(this.pgid);
        this.state.State = 'running';
        this.state.StartedAt ??= new Date().toISOString();
        this.push(event('Started', { DisplayMessage: 'Task started by client' }));
        this.exited = new Promise((done) => child.once('exit', () => done()));
      });
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    if (this.pgid) {
      // Whatever the leader started goes with it, as with Nomad's executor.
      signalProcessGroup(this.pgid, 'SIGKILL');
      liveGroups.delete(this.pgid);
    }
    if (result.error) {
      const message = `failed to launch command with executor: ${result.error}`;
      this.push(event('Driver Failure', { DriverError: message, DisplayMessage: message }));
      return message;
    }
    const signalNumber = result.signal
      ? (({ SIGINT: 2, SIGKILL: 9, SIGTERM: 15, SIGHUP: 1, SIGQUIT: 3 } as Record<string, number>)[result.signal] ?? 0)
      : 0;
    this.push(
      event('Terminated', {
        ExitCode: result.code ?? 0,
        Signal: signalNumber,
        DisplayMessage: `Exit Code: ${result.code ?? 0}${signalNumber ? `, Signal: ${signalNumber}` : ''}`,
      }),
    );
    return result.code === 0 ? null : `exit code ${result.code ?? 'none'}${result.signal ? ` (${result.signal})` : ''}`;
  }

  /** client/allocrunner/taskrunner/restarts: restart within Attempts per Interval, else fail or wait. */
  private nextRestart(failure: string | null): number | null {
    const job = this.alloc.job;
    const policy = this.task.RestartPolicy;
    if (failure === null && (job.Type === 'batch' || job.Type === 'sysbatch')) {
      this.finish(false, '');
      return null;
    }
    const now = Date.now() * 1_000_000;
    this.restartsInWindow = this.restartsInWindow.filter((t) => now - t < policy.Interval);
    if (this.restartsInWindow.length >= policy.Attempts) {
      if (policy.Mode === 'delay') {
        const oldest = this.restartsInWindow[0] ?? now;
        this.restartsInWindow = [];
        return Math.max(policy.Delay, oldest + policy.Interval - now);
      }
      const reason = `Exceeded allowed attempts ${policy.Attempts} in interval ${goDuration(policy.Interval)} and mode is "fail"`;
      this.push(event('Not Restarting', { DisplayMessage: reason, FailsTask: true, RestartReason: reason }));
      this.fail(reason);
      return null;
    }
    this.restartsInWindow.push(now);
    // Nomad adds up to 25% jitter to the delay.
    return Math.round(policy.Delay * (1 + Math.random() * 0.25));
  }

  private fail(reason: string): void {
    this.finish(true, reason);
  }

  private finish(failed: boolean, _reason: string): void {
    this.state.State = 'dead';
    this.state.Failed = failed;
    this.state.FinishedAt = new Date().toISOString();
    this.alloc.taskChanged();
  }

  private async download(artifact: Json, render: (text: string) => string): Promise<void> {
    const source = render(artifact.GetterSource ?? '');
    const url = new URL(source);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`stand-in downloads only http(s) artifacts: ${source}`);
    const options: Record<string, string> = { ...(artifact.GetterOptions ?? {}) };
    // go-getter reads options from the query string too (archive=, checksum=).
    for (const key of ['archive', 'checksum']) {
      const value = url.searchParams.get(key);
      if (value !== null) {
        options[key] ??= value;
        url.searchParams.delete(key);
      }
    }
    const response = await fetch(url, { headers: artifact.GetterHeaders ?? {} });
    if (!response.ok) throw new Error(`GET error: bad response code: ${response.status}`);
    const bytes = Buffer.from(await response.arrayBuffer());
    if (options.checksum) {
      const [algorithm, expected] = options.checksum.includes(':') ? options.checksum.split(':', 2) : ['sha256', options.checksum];
      const actual = createHash(algorithm!).update(bytes).digest('hex');
      if (actual !== expected)
        throw new Error(`Checksums did not match for ${path.basename(url.pathname)}.\nExpected: ${expected}\nGot: ${actual}`);
    }
    const dest = path.resolve(this.dir, render(artifact.RelativeDest ?? 'local/'));
    if (!(dest + path.sep).startsWith(this.dir + path.sep) && dest !== this.dir)
      throw new Error('artifact destination path escapes the alloc directory');
    const name = path.basename(url.pathname) || 'download';
    const archive =
      options.archive === 'false'
        ? null
        : (options.archive ?? (/\.(tar\.gz|tgz)$/.test(name) ? 'tar.gz' : /\.tar$/.test(name) ? 'tar' : null));
    if (artifact.GetterMode === 'file') {
      mkdirSync(path.dirname(dest), { recursive: true });
      await writeFile(dest, bytes);
      return;
    }
    mkdirSync(dest, { recursive: true });
    if (archive === 'tar.gz' || archive === 'tgz' || archive === 'tar') {
      const temp = path.join(this.dir, 'tmp', `artifact-${Date.now()}.${archive === 'tar' ? 'tar' : 'tgz'}`);
      await writeFile(temp, bytes);
      await run('tar', [archive === 'tar' ? '-xf' : '-xzf', temp, '-C', dest]);
      return;
    }
    await writeFile(path.join(dest, name), bytes);
  }

  /** KillSignal (default SIGINT) to the group, SIGKILL after KillTimeout. */
  async kill(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    if (this.state.State !== 'running' || !this.pgid) {
      if (this.state.State !== 'dead') this.finish(false, '');
      return;
    }
    const pgid = this.pgid;
    const signal = (signals.has(this.task.KillSignal) ? this.task.KillSignal : 'SIGINT') as NodeJS.Signals;
    this.push(
      event('Killing', {
        KillTimeout: this.task.KillTimeout,
        DisplayMessage: `Sent interrupt. Waiting ${goDuration(this.task.KillTimeout)} before force killing`,
      }),
    );
    signalProcessGroup(pgid, signal);
    const timer = setTimeout(() => signalProcessGroup(pgid, 'SIGKILL'), Math.max(this.task.KillTimeout / 1_000_000, 0));
    await this.exited;
    clearTimeout(timer);
    signalProcessGroup(pgid, 'SIGKILL');
    liveGroups.delete(pgid);
    this.push(event('Killed', { DisplayMessage: 'Task successfully killed' }));
    this.finish(false, '');
  }
}

export class AllocRunner {
  readonly tasks: TaskRunner[];
  private registered: string[] = [];
  private done: Promise<unknown> = Promise.resolve();

  constructor(
    readonly alloc: Json,
    readonly job: Json,
    readonly group: Json,
    private readonly context: RunnerContext,
  ) {
    this.tasks = (group.Tasks ?? []).map((task: Json) => new TaskRunner(this, task));
  }

  get dir(): string {
    return path.join(this.context.dataDir, 'alloc', this.alloc.ID);
  }

  get imageSource(): ImageSource {
    return this.context.imageSource;
  }

  get variables(): Variables {
    return this.context.variables;
  }

  get ports(): AllocatedPort[] {
    return this.alloc.AllocatedResources.Shared.Ports;
  }

  private envInput(task: Json | null): EnvInput {
    return {
      job: this.job,
      group: this.group,
      task,
      allocId: this.alloc.ID,
      allocName: this.alloc.Name,
      allocIndex: Number(/\[(\d+)\]$/.exec(this.alloc.Name)?.[1] ?? 0),
      ports: this.ports,
      allocDir: this.dir,
      datacenter: this.context.datacenter,
      nodeName: this.context.nodeName,
      containerPaths: task?.Driver === 'docker',
    };
  }

  env(task: Json | null): Record<string, string> {
    return nomadEnv(this.envInput(task));
  }

  node(): Record<string, string> {
    return nodeAttributes(this.envInput(null));
  }

  /** Consul check IDs of this allocation's services (for deployment health). */
  checkIds: string[] = [];

  start(): void {
    for (const sub of ['alloc/logs', 'alloc/data', 'alloc/tmp']) mkdirSync(path.join(this.dir, sub), { recursive: true });
    this.alloc.TaskStates = Object.fromEntries(this.tasks.map((t) => [t.task.Name, t.state]));
    // Host networking: the network hook leaves an empty status, which Nomad 1.11.3 answered once the client had the allocation.
    this.alloc.NetworkStatus = { InterfaceName: '', Address: '', AddressIPv6: '', DNS: null };
    this.done = (async () => {
      await this.registerServices();
      await Promise.all(this.tasks.map((t) => t.run()));
    })();
  }

  private async registerServices(): Promise<void> {
    const consul = this.context.consul;
    const entries: Array<{ service: Json; workload: string; task: Json | null }> = [];
    for (const service of this.group.Services ?? []) entries.push({ service, workload: `group-${this.group.Name}`, task: null });
    for (const task of this.group.Tasks ?? [])
      for (const service of task.Services ?? []) entries.push({ service, workload: task.Name, task });
    for (const { service, workload, task } of entries) {
      if (service.Provider !== 'consul') continue;
      const env = this.env(task);
      const node = this.node();
      const id = serviceId(this.alloc.ID, workload, service);
      const body = registration(id, service, this.ports, (text) => interpolate(text, env, node));
      this.checkIds.push(...((body.Checks ?? []) as Json[]).map((c) => c.CheckID as string));
      if (consul && (await consul.register(body))) this.registered.push(id);
    }
  }

  taskChanged(): void {
    const states = this.tasks.map((t) => t.state);
    if (this.alloc.ClientStatus !== 'complete' && this.alloc.ClientStatus !== 'failed') {
      if (states.some((s) => s.State === 'dead' && s.Failed)) {
        this.alloc.ClientStatus = 'failed';
        this.alloc.ClientDescription = 'Failed tasks';
        // A failed task stops its siblings, as the alloc runner does.
        void this.stopTasks();
      } else if (states.every((s) => s.State === 'dead')) {
        this.alloc.ClientStatus = 'complete';
        this.alloc.ClientDescription = 'All tasks have completed';
      } else if (states.every((s) => s.State === 'running' || (s.State === 'dead' && !s.Failed))) {
        this.alloc.ClientStatus = 'running';
        this.alloc.ClientDescription = 'Tasks are running';
      }
    }
    if (this.alloc.ClientStatus === 'failed' || this.alloc.ClientStatus === 'complete') void this.deregisterServices();
    this.context.changed();
  }

  private async deregisterServices(): Promise<void> {
    const ids = this.registered;
    this.registered = [];
    for (const id of ids) await this.context.consul?.deregister(id);
  }

  private async stopTasks(): Promise<void> {
    await Promise.all(this.tasks.map((t) => t.kill()));
  }

  /** Deregisters services, waits the group's ShutdownDelay, kills every task. */
  async stop(): Promise<void> {
    await this.deregisterServices();
    const delay = (this.group.ShutdownDelay ?? 0) / 1_000_000;
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    await this.stopTasks();
    await this.done.catch(() => undefined);
    if (this.alloc.ClientStatus !== 'failed') {
      this.alloc.ClientStatus = 'complete';
      this.alloc.ClientDescription = 'All tasks have completed';
    }
    this.context.changed();
  }
}

export { SECOND };
