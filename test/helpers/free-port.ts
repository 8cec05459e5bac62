import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * A loopback port nothing listens on now, for a test that must know its
 * server's port before it starts. It is drawn from below the kernel's
 * ephemeral range: a port from `listen(0)` is one an outgoing connection
 * (of this test run's hundreds) may take before the server binds it, which
 * failed CI with "Address already in use". `udp` also wants it free for UDP
 * (dnsmasq binds both).
 */
export async function freePort(options: { udp?: boolean } = {}): Promise<number> {
  const [low, high] = belowEphemeralRange();
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = low + Math.floor(Math.random() * (high - low));
    if ((await tcpFree(port)) && (!options.udp || (await udpFree(port)))) return port;
  }
  throw new Error(`no free loopback port between ${low} and ${high} after 200 tries`);
}

function belowEphemeralRange(): [number, number] {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch {
    // Not Linux: keep the usual default.
  }
  return ephemeralLow > 12000 ? [10000, ephemeralLow] : [ephemeralLow + 20000, 65000];
}

function tcpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function udpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', () => resolve(false));
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });
}
