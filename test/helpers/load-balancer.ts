/**
 * The load balancer an operator puts in front of svc replicas, as small as a
 * test needs: a TCP proxy that hands each connection to the first backend
 * that accepts it, so a replica that died (connection refused) is skipped.
 * Its address is the replicas' shared `publicUrl`.
 */
import net from 'node:net';

export interface LoadBalancer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startLoadBalancer(backends: readonly number[]): Promise<LoadBalancer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.pause();
    connect(client, 0);
  });

  function connect(client: net.Socket, index: number): void {
    const port = backends[index];
    if (port === undefined) return void client.destroy();
    const upstream = net.connect({ host: '127.0.0.1', port });
    // Refused (the replica is down): the next backend gets the connection.
    const refused = () => connect(client, index + 1);
    upstream.once('error', refused);
    upstream.once('connect', () => {
      upstream.off('error', refused);
      sockets.add(upstream);
      upstream.once('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
      client.resume();
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
