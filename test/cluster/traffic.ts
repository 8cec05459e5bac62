/**
 * Steady traffic to one workload URL while a test breaks an agent: one
 * request at a time, each bounded, every answer kept with its status, time
 * and whether the gateway marked it stale. Bounded in count and time: it
 * stops by itself after `maxMs`.
 */
export interface Answer {
  readonly at: number;
  /** 0: no answer within the bound, or the connection failed. */
  readonly status: number;
  readonly ms: number;
  /** The `X-Svc-Routes` header, when the gateway set it. */
  readonly routes: string | null;
}

export class Traffic {
  readonly answers: Answer[] = [];
  readonly #stop = new AbortController();
  readonly #done: Promise<void>;

  constructor(
    readonly url: string,
    options: { readonly intervalMs?: number; readonly boundMs?: number; readonly maxMs?: number } = {},
  ) {
    const intervalMs = options.intervalMs ?? 250;
    const boundMs = options.boundMs ?? 30_000;
    const until = Date.now() + (options.maxMs ?? 600_000);
    this.#done = (async () => {
      while (!this.#stop.signal.aborted && Date.now() < until) {
        const at = Date.now();
        let status = 0;
        let routes: string | null = null;
        try {
          const response = await fetch(url, { signal: AbortSignal.timeout(boundMs) });
          await response.arrayBuffer();
          status = response.status;
          routes = response.headers.get('x-svc-routes');
        } catch {
          /* status 0 */
        }
        this.answers.push({ at, status, ms: Date.now() - at, routes });
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    })();
  }

  /** The answers sent at or after `from` (ms since the epoch). */
  since(from: number): Answer[] {
    return this.answers.filter((a) => a.at >= from);
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#done;
  }
}

/** `200×40, 503×2` in the order first seen: a readable summary for assertion messages. */
export function summary(answers: readonly Answer[]): string {
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(String(a.status), (counts.get(String(a.status)) ?? 0) + 1);
  const slowest = Math.max(0, ...answers.map((a) => a.ms));
  return `${[...counts].map(([status, n]) => `${status}×${n}`).join(', ')} (slowest ${slowest} ms)`;
}
