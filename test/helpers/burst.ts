/**
 * A burst that reaches the server at once: every connection is open first,
 * then every request is sent in the same tick. With `fetch`, 20 requests
 * trickle in over connects for tens of milliseconds, long enough for a
 * container forked from a zygote (~30 ms) to become healthy mid-burst and
 * take requests that were meant to be refused.
 */
import http from 'node:http';
import net from 'node:net';

export interface BurstAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export async function burst(url: string, requests: number): Promise<BurstAnswer[]> {
  const target = new URL(url);
  const sockets = await Promise.all(
    Array.from(
      { length: requests },
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect(Number(target.port), target.hostname, () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  const sent = sockets.map((socket) => http.request(target, { agent: false, createConnection: () => socket }));
  const answers = sent.map(
    (request) =>
      new Promise<BurstAnswer>((resolve, reject) => {
        request.once('error', reject);
        request.once('response', (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.once('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
        });
      }),
  );
  for (const request of sent) request.end(); // the same tick: the gateway reads them together
  try {
    return await Promise.all(answers);
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}
