/**
 * The replay's translation from the real agents' IDs and indexes to the
 * stand-ins' own: every answer is walked beside the recorded one, and each
 * UUID, `X-*-Index` header and `*Index` field recorded is paired with the
 * stand-in's value at the same place. A replayed request then carries the
 * stand-in's value wherever the recorded one came from an earlier answer
 * (job IDs are svc's and stay as they are).
 */
import type { Exchange, Payload } from '../../cluster/recorder.js';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body?: Payload;
}

export class IdMap {
  readonly #ids = new Map<string, string>();
  /** Per replayed answer, `<key>:<recorded>` → the stand-in's value (`key` is the header or field name). */
  readonly #indexes: Map<string, number>[] = [];

  /** Pairs the recorded answer's IDs and indexes with the stand-in's. */
  learn(recorded: Answer, replayed: Answer): void {
    const indexes = new Map<string, number>();
    for (const [name, value] of Object.entries(recorded.headers)) {
      const mine = replayed.headers[name];
      if (name.endsWith('-Index') && mine !== undefined) indexes.set(`${name}:${value}`, Number(mine));
    }
    const walk = (real: unknown, mine: unknown, key: string): void => {
      if (typeof real === 'string' && typeof mine === 'string') {
        const theirs = real.match(UUID) ?? [];
        const ours = mine.match(UUID) ?? [];
        if (theirs.length === ours.length)
          theirs.forEach((id, i) => {
            if (!this.#ids.has(id)) this.#ids.set(id, ours[i]!);
          });
      } else if (typeof real === 'number' && typeof mine === 'number' && key.endsWith('Index')) {
        indexes.set(`${key}:${real}`, mine);
      } else if (Array.isArray(real) && Array.isArray(mine)) {
        real.forEach((item, i) => {
          if (i < mine.length) walk(item, mine[i], key);
        });
      } else if (isObject(real) && isObject(mine)) {
        for (const [k, v] of Object.entries(real)) if (k in mine) walk(v, mine[k], k);
      }
    };
    if (recorded.body !== undefined && replayed.body !== undefined) {
      if ('json' in recorded.body && 'json' in replayed.body) walk(recorded.body.json, replayed.body.json, '');
      else if ('text' in recorded.body && 'text' in replayed.body) walk(recorded.body.text, replayed.body.text, '');
    }
    this.#indexes.push(indexes);
  }

  /** The stand-in's index for a recorded one, from the latest answer that carried it (under one of `keys` first). */
  index(recorded: number, keys: readonly string[]): number | undefined {
    for (let i = this.#indexes.length - 1; i >= 0; i -= 1) {
      const pairs = this.#indexes[i]!;
      for (const key of keys) {
        const mine = pairs.get(`${key}:${recorded}`);
        if (mine !== undefined) return mine;
      }
      for (const [pair, mine] of pairs) if (pair.endsWith(`:${recorded}`)) return mine;
    }
    return undefined;
  }

  /**
   * Whether the request's path names a recorded ID no earlier answer paired with one of the stand-in's:
   * something the stand-in never had, such as the allocation of a periodic child launched at a tick
   * (`<parent>/periodic-<unix seconds>`) of the recording's clock, which the replay's clock does not reach.
   */
  unknown(exchange: Exchange): boolean {
    return (exchange.path.match(UUID) ?? []).some((id) => !this.#ids.has(id));
  }

  id(recorded: string): string {
    return recorded.replace(UUID, (id) => this.#ids.get(id) ?? id);
  }

  /** The request as the stand-in must get it; a blocking query waits `waitMs` at most (see replay.test.ts). */
  request(exchange: Exchange, waitMs: number): { path: string; body?: string | Buffer } {
    const cut = exchange.path.indexOf('?');
    const rawPath = cut === -1 ? exchange.path : exchange.path.slice(0, cut);
    const search = cut === -1 ? undefined : exchange.path.slice(cut + 1);
    let path = this.id(rawPath);
    if (search !== undefined) {
      const query = search.split('&').map((pair) => {
        const at = pair.indexOf('=');
        if (at === -1) return pair;
        const name = pair.slice(0, at);
        const value = pair.slice(at + 1);
        if (name === 'index') return `index=${this.index(Number(value), ['X-Nomad-Index', 'X-Consul-Index']) ?? value}`;
        if (name === 'wait') return `wait=${waitMs}ms`;
        if (name === 'cas' && value !== '0') return `cas=${this.index(Number(value), ['ModifyIndex']) ?? value}`;
        return `${name}=${this.id(value)}`;
      });
      path += `?${query.join('&')}`;
    }
    const request = exchange.request;
    if (request === undefined) return { path };
    if ('base64' in request) return { path, body: Buffer.from(request.base64, 'base64') };
    if ('text' in request) return { path, body: this.id(request.text) };
    return { path, body: JSON.stringify(this.#body(request.json)) };
  }

  #body(json: unknown): unknown {
    const rewrite = (node: unknown): unknown => {
      if (typeof node === 'string') return this.id(node);
      if (Array.isArray(node)) return node.map(rewrite);
      if (!isObject(node)) return node;
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, rewrite(v)]));
    };
    const out = rewrite(json);
    // EnforceIndex: the JobModifyIndex svc read from an earlier answer.
    if (isObject(out) && out.EnforceIndex === true && typeof out.JobModifyIndex === 'number' && out.JobModifyIndex > 0) {
      out.JobModifyIndex = this.index(out.JobModifyIndex, ['JobModifyIndex']) ?? out.JobModifyIndex;
    }
    return out;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
