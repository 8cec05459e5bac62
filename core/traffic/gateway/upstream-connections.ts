import { Client, type Dispatcher } from 'undici';

/**
 * The connections to one container worker: undici `Client`s (one connection each, one request
 * at a time), the one freed last used first.
 *
 * Why not undici's `Pool`: a pool marks a connection free again only when its client emits
 * `drain`, a turn or more after the answer was complete, and meanwhile hands the next request
 * a connection of its own, opening new ones up to its limit. The limit must be the worker's
 * whole capacity (a slow request holds its connection), so it opened twice as many
 * connections as requests in flight (8 for waves of 4, 32 for waves of 16: measured), and it
 * scans its list of connections on every request. Here a connection is free the moment its answer is complete,
 * and the stack's top is always the warmest one: the connections in use match the requests in
 * flight, which admission already bounds by the capacity. Connections left idle at the bottom
 * are closed by either side's keep-alive time-out; their client opens a new one when next used.
 */
export class UpstreamConnections {
  readonly #origin: string;
  readonly #options: Client.Options;
  /** Free clients, the last freed on top. */
  readonly #free: Client[] = [];
  /** Every client made, free or not, until closed. */
  readonly #all = new Set<Client>();
  #closing = false;

  constructor(origin: string, options: Client.Options) {
    this.#origin = origin;
    this.#options = options;
  }

  /** Sends the request on a free connection (a new one when none is), with `handler` told of its answer. */
  dispatch(request: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    let client = this.#free.pop();
    while (client !== undefined && (client.destroyed || client.closed)) {
      this.#all.delete(client);
      client = this.#free.pop();
    }
    if (client === undefined) {
      client = new Client(this.#origin, this.#options);
      this.#all.add(client);
    }
    client.dispatch(request, new Lease(handler, client, this));
  }

  /** The request on `client` ended (answered, failed or aborted): the connection takes the next one. */
  giveBack(client: Client): void {
    if (this.#closing || client.destroyed || client.closed) this.#all.delete(client);
    else this.#free.push(client);
  }

  /** Lets requests in flight finish, then closes every connection. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#free.length = 0;
    await Promise.all([...this.#all].map((client) => client.close()));
    this.#all.clear();
  }

  /** Closes every connection now, failing the requests in flight. */
  async destroy(): Promise<void> {
    this.#closing = true;
    this.#free.length = 0;
    await Promise.all([...this.#all].map((client) => client.destroy()));
    this.#all.clear();
  }
}

/** The caller's handler, passed every event of the request; its end gives the connection back. */
class Lease implements Dispatcher.DispatchHandler {
  readonly #handler: Dispatcher.DispatchHandler;
  readonly #client: Client;
  readonly #connections: UpstreamConnections;
  #ended = false;

  constructor(handler: Dispatcher.DispatchHandler, client: Client, connections: UpstreamConnections) {
    this.#handler = handler;
    this.#client = client;
    this.#connections = connections;
  }

  onConnect(abort: (error?: Error) => void): void {
    this.#handler.onConnect?.(abort);
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean {
    return this.#handler.onHeaders?.(statusCode, headers, resume, statusText) ?? true;
  }

  onData(chunk: Buffer): boolean {
    return this.#handler.onData?.(chunk) ?? true;
  }

  onComplete(trailers: string[] | null): void {
    // Given back after the handler ran: a request it starts at once takes another connection.
    try {
      this.#handler.onComplete?.(trailers);
    } finally {
      this.#end();
    }
  }

  onError(error: Error): void {
    try {
      this.#handler.onError?.(error);
    } finally {
      this.#end();
    }
  }

  /** Once, however the request ended: a connection on the stack twice would carry two requests at once. */
  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#connections.giveBack(this.#client);
  }
}
