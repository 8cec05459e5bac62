import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

/**
 * The least a Node proxy can do: node:http in, one undici pool over the
 * container's Unix socket out, nothing else. The gateway's cost is judged
 * against this floor on the same machine in the same run.
 */
export async function startFloorProxy(socketPath: string, connections: number): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new Pool('http://localhost', { socketPath, connections, pipelining: 1 });
  const server = http.createServer((req, res) => {
    pool
      .request({ method: 'GET', path: req.url ?? '/' })
      .then(async (upstream) => {
        const body = Buffer.from(await upstream.body.arrayBuffer());
        res.writeHead(upstream.statusCode, { 'content-type': String(upstream.headers['content-type']), 'content-length': body.length });
        res.end(body);
      })
      .catch(() => {
        res.statusCode = 502;
        res.end();
      });
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
