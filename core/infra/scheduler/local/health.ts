import http from 'node:http';

/** The runtime's health route, answered before any user code runs. */
export const HEALTH_PATH = '/_svc/health';

/** One health probe over a Unix socket: true on 200. */
export function probeHealth(socketPath: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.request({ socketPath, path: HEALTH_PATH, method: 'GET', timeout: timeoutMs, agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
    request.end();
  });
}

export interface WaitHealthyOptions {
  readonly socketPath: string;
  readonly timeoutMs: number;
  /** Stops waiting early (the process exited). */
  readonly cancelled: () => boolean;
}

/**
 * Polls until the container answers its health route. Starts at 5 ms and
 * backs off to 50 ms: a hello app is up in ~100 ms, a heavy import takes seconds.
 */
export async function waitHealthy(options: WaitHealthyOptions): Promise<'healthy' | 'cancelled' | 'timeout'> {
  const deadline = Date.now() + options.timeoutMs;
  let delay = 5;
  while (Date.now() < deadline) {
    if (options.cancelled()) return 'cancelled';
    if (await probeHealth(options.socketPath)) return 'healthy';
    if (options.cancelled()) return 'cancelled';
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 50);
  }
  return 'timeout';
}
