import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';

/**
 * How the floor writes an answer back: `collect` keeps the whole answer and
 * sends it with its head in one write (the least work, but no streaming: an
 * SSE answer would reach the client only at its end); `stream` sends the head
 * as it comes, then each piece as it comes (the least a streaming proxy does).
 */
export type FloorMode = 'collect' | 'stream';

/**
 * The least a Node proxy can do: node:http in, one undici pool over the
 * container's Unix socket out, at undici's lowest layer (`dispatch`, the one
 * the gateway uses), the request's head passed on and the answer's passed
 * back, nothing else. The gateway's cost is judged against this floor on the
 * same machine in the same run.
 */
export async function startFloorProxy(
  socketPath: string,
  connections: number,
  mode: FloorMode = 'collect',
): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new Pool('http://localhost', { socketPath, connections, pipelining: 1 });
  const server = http.createServer((req, res) => {
    const answer = mode === 'collect' ? new Answer(res) : new StreamedAnswer(res);
    pool.dispatch({ method: req.method as Dispatcher.HttpMethod, path: req.url ?? '/', headers: req.rawHeaders }, answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.close();
    },
  };
}

/** Collects the (small) answer and sends it with its head in one write. */
class Answer implements Dispatcher.DispatchHandler {
  #status = 502;
  #headers: string[] = [];
  readonly #chunks: Buffer[] = [];

  constructor(private readonly res: http.ServerResponse) {}

  onConnect(): void {}

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.#status = statusCode;
    this.#headers = rawHeaders.map(String);
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.res.writeHead(this.#status, this.#headers);
    this.res.end(this.#chunks.length === 1 ? this.#chunks[0] : Buffer.concat(this.#chunks));
  }

  onError(): void {
    this.res.statusCode = 502;
    this.res.end();
  }
}

/** Sends the head at once, then each piece as it comes, pausing the container while the client is slower. */
class StreamedAnswer implements Dispatcher.DispatchHandler {
  #resume: () => void = () => {};

  constructor(private readonly res: http.ServerResponse) {}

  onConnect(): void {}

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    this.res.writeHead(statusCode, rawHeaders.map(String));
    this.res.flushHeaders();
    this.#resume = resume;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.res.write(chunk)) return true;
    this.res.once('drain', this.#resume);
    return false;
  }

  onComplete(): void {
    this.res.end();
  }

  onError(): void {
    if (this.res.headersSent) this.res.destroy();
    else {
      this.res.statusCode = 502;
      this.res.end();
    }
  }
}
