/**
 * `svc container exec`: a command run inside a running local container, as its workers run: in its
 * cgroup (its limits count it), in its mount namespace (its volumes are there; as root), with its
 * environment (secrets included) and its image's Python first on PATH, in its code's folder. The output
 * is kept up to a bound; a command past its time-out is killed.
 */
import { type ChildProcess, type ChildProcessByStdio, spawn, type StdioOptions } from 'node:child_process';
import type { Readable } from 'node:stream';
import path from 'node:path';
import { SvcError } from '../../../model/errors.js';
import type { ExecOutcome, ExecRequest } from '../types.js';
import type { Container } from './container.js';
import { runtimeEnv } from './runtime-command.js';
import { ExecOutput } from '../exec-output.js';

/**
 * Spawns `argv` inside the running container: the shell joins the container's cgroup first (its own pid),
 * then becomes nsenter (as root: the container's mount namespace), which becomes the command.
 */
export function spawnIn(
  container: Container,
  argv: readonly string[],
  options: { stdio: StdioOptions; env?: NodeJS.ProcessEnv; gpus?: Readonly<Record<string, string>> },
): ChildProcess {
  const pid = container.group?.pid;
  if (pid === undefined || container.state !== 'healthy') {
    throw new SvcError('conflict', `container ${container.id} is ${container.state}: it needs to be running.`);
  }
  const { unit } = container;
  const env = {
    ...runtimeEnv(unit, options.gpus),
    PATH: `${path.dirname(unit.image.pythonPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    ...options.env,
  };
  const join = (container.cgroup?.procsFiles ?? []).map((file) => `echo $$ > ${JSON.stringify(file)}`).join('; ');
  // Entering a mount namespace moves to its root: --wd comes back to the code's folder.
  const enter = process.getuid?.() === 0 ? ['nsenter', `--target=${pid}`, '--mount', `--wd=${unit.source.root}`, '--'] : [];
  return spawn('/bin/sh', ['-c', `${join}${join ? '; ' : ''}exec "$@"`, 'sh', ...enter, ...argv], {
    cwd: unit.source.root,
    env,
    stdio: options.stdio,
  });
}

/** `gpus`: the container's GPU variables (gpu-allocator.ts gpuEnv), which its commands get as its workers do. */
export function execIn(container: Container, request: ExecRequest, gpus: Readonly<Record<string, string>> = {}): Promise<ExecOutcome> {
  let child: ChildProcessByStdio<null, Readable, Readable>;
  try {
    child = spawnIn(container, request.argv, { stdio: ['ignore', 'pipe', 'pipe'], gpus }) as ChildProcessByStdio<null, Readable, Readable>;
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise((resolve, reject) => {
    const out = new ExecOutput();
    for (const name of ['stdout', 'stderr'] as const) child[name].on('data', (chunk: Buffer) => out.add(name, chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, request.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new SvcError('bad_request', `could not run ${request.argv[0]} in ${container.id}: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve(out.outcome(code, signal, timedOut));
    });
  });
}
