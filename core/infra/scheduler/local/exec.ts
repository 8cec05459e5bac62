/**
 * `svc container exec`: a command run inside a running local container, as its workers run: in its
 * cgroup (its limits count it), in its mount namespace (its volumes are there; as root), with its
 * environment (secrets included) and its image's Python first on PATH, in its code's folder. The output
 * is kept up to a bound; a command past its time-out is killed.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { SvcError } from '../../../model/errors.js';
import { EXEC_OUTPUT_BYTES, type ExecOutcome, type ExecRequest } from '../types.js';
import type { Container } from './container.js';
import { runtimeEnv } from './runtime-command.js';

export function execIn(container: Container, request: ExecRequest): Promise<ExecOutcome> {
  const pid = container.group?.pid;
  if (pid === undefined || container.state !== 'healthy') {
    return Promise.reject(new SvcError('conflict', `container ${container.id} is ${container.state}: exec needs a running one.`));
  }
  const { unit } = container;
  const env = { ...runtimeEnv(unit), PATH: `${path.dirname(unit.image.pythonPath)}${path.delimiter}${process.env.PATH ?? ''}` };
  // The shell joins the container's cgroup first (its own pid), then becomes nsenter, which becomes the command.
  const join = (container.cgroup?.procsFiles ?? []).map((file) => `echo $$ > ${JSON.stringify(file)}`).join('; ');
  const enter = process.getuid?.() === 0 ? ['nsenter', `--target=${pid}`, '--mount', '--'] : [];
  const child = spawn('/bin/sh', ['-c', `${join}${join ? '; ' : ''}exec "$@"`, 'sh', ...enter, ...request.argv], {
    cwd: unit.source.root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const out = { stdout: [] as Buffer[], stderr: [] as Buffer[], bytes: { stdout: 0, stderr: 0 }, truncated: false };
    for (const name of ['stdout', 'stderr'] as const) {
      child[name].on('data', (chunk: Buffer) => {
        const room = EXEC_OUTPUT_BYTES - out.bytes[name];
        if (room <= 0) return void (out.truncated = true);
        if (chunk.length > room) out.truncated = true;
        out[name].push(chunk.subarray(0, room));
        out.bytes[name] += Math.min(chunk.length, room);
      });
    }
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
      resolve({
        exitCode: code,
        signal,
        timedOut,
        truncated: out.truncated,
        stdout: Buffer.concat(out.stdout).toString('utf8'),
        stderr: Buffer.concat(out.stderr).toString('utf8'),
      });
    });
  });
}
