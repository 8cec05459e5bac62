/** What a `svc serve` child process prints, for the end-to-end tests that run the real CLI. */
import type { ChildProcess } from 'node:child_process';

export interface ServeOutput {
  stdout: string;
  stderr: string;
}

/**
 * Collects the child's output into `out` (for as long as it runs) and resolves once it serves:
 * stderr said so and stdout holds the whole summary (the two pipes race). Rejects if it exits first.
 */
export function untilServing(child: ChildProcess, out: ServeOutput): Promise<void> {
  const serving = () => out.stderr.includes('press Ctrl-C to stop') && /Preview of[\s\S]*\n\n$/.test(out.stdout);
  return new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out.stdout += chunk.toString();
      if (serving()) resolve();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      out.stderr += chunk.toString();
      if (serving()) resolve();
    });
    child.once('exit', (code) => reject(new Error(`svc serve exited with ${code} before serving:\n${out.stderr}`)));
  });
}
