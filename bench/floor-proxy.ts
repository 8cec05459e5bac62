import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';

/**
 * The least a Node proxy can do: node:http in, one undici pool over the
 * container's Unix socket out, at undici's lowest layer (`dispatch`, the one
 * the gateway uses), the request's head passed on and the answer's passed
 * back, nothing else. The gateway's cost is judged against this floor on the
 * same machine in the same run.
 */
export async function startFloorProxy(socketPath: string, connections: number): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new Pool('http://localhost', { socketPath, connections, pipelining: 1 });
  const server = http.createServer((req, res) => {
    pool.dispatch({ method: req.method as Dispatcher.HttpMethod, path: req.url ?? '/', headers: req.rawHeaders }, new Answer(res));
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
