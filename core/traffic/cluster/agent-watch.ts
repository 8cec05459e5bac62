/**
 * Whether svc can reach an agent it depends on (Consul, Nomad), probed on a
 * timer with a short bound: a stopped agent (SIGSTOP) answers nothing, and
 * svc's long blocking queries alone would not notice it for minutes. While a
 * probe fails, `outage()` says since when and why; the gateway then marks
 * its answers as served from stale routes, `/_svc/ready` names the outage,
 * and the API's refusals say which agent is missing. One log line when an
 * outage starts, one when it ends (with its length); `onRecovered` listeners
 * run then, so loops sleeping in back-off read again at once.
 */

export interface Outage {
  /** When the last probe that answered was sent (the start of the watch when none did). */
  readonly since: Date;
  /** `Consul at http://127.0.0.1:8500 does not answer (no answer within 2 s)`. */
  readonly reason: string;
}

export interface AgentWatchOptions {
  /** The agent's name in messages: `Consul`, `Nomad`. */
  readonly name: string;
  readonly address: string;
  /** What svc does without it, for the log line that starts an outage. */
  readonly meanwhile: string;
  /** One cheap request (`/v1/status/leader`); rejects when the agent cannot serve. */
  probe(signal: AbortSignal): Promise<void>;
  /** Lets go of what the probe holds (its client's connections), on close. */
  release?(): void;
  /** Between probes (default 2 s). */
  readonly intervalMs?: number;
  /** One probe's bound (default 2 s). */
  readonly timeoutMs?: number;
  log(text: string): void;
}

export class AgentWatch {
  readonly name: string;
  readonly #options: AgentWatchOptions;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  readonly #stop = new AbortController();
  readonly #recovered = new Set<() => void>();
  #lastAnswer = new Date();
  #outage: Outage | null = null;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | null = null;

  constructor(options: AgentWatchOptions) {
    this.name = options.name;
    this.#options = options;
    this.#intervalMs = options.intervalMs ?? 2000;
    this.#timeoutMs = options.timeoutMs ?? 2000;
  }

  /** Null while the agent answers. */
  outage(): Outage | null {
    return this.#outage;
  }

  /** Calls `listener` each time the agent answers again after an outage; returns the unsubscribe function. */
  onRecovered(listener: () => void): () => void {
    this.#recovered.add(listener);
    return () => this.#recovered.delete(listener);
  }

  start(): void {
    if (this.#timer !== undefined || this.#stop.signal.aborted) return;
    this.#lastAnswer = new Date();
    this.#schedule(0);
  }

  /** Probes now (tests, and a caller that just saw a failure); resolves when the probe has settled. */
  check(): Promise<void> {
    this.#running ??= this.#probe().finally(() => (this.#running = null));
    return this.#running;
  }

  async close(): Promise<void> {
    this.#stop.abort();
    clearTimeout(this.#timer);
    this.#recovered.clear();
    await this.#running;
    this.#options.release?.();
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => {
      void this.check().then(() => {
        if (!this.#stop.signal.aborted) this.#schedule(this.#intervalMs);
      });
    }, delayMs);
    this.#timer.unref();
  }

  async #probe(): Promise<void> {
    const sent = new Date();
    const bound = AbortSignal.timeout(this.#timeoutMs);
    try {
      await this.#options.probe(AbortSignal.any([bound, this.#stop.signal]));
    } catch (error) {
      if (this.#stop.signal.aborted) return;
      this.#failed(bound.aborted ? `no answer within ${this.#timeoutMs / 1000} s` : describe(error));
      return;
    }
    this.#lastAnswer = sent;
    const ended = this.#outage;
    if (ended === null) return;
    this.#outage = null;
    const seconds = Math.round((Date.now() - ended.since.getTime()) / 1000);
    this.#options.log(`${this.name} at ${this.#options.address} answers again (no answer for ${seconds} s)`);
    for (const listener of [...this.#recovered]) listener();
  }

  #failed(why: string): void {
    const reason = `${this.name} at ${this.#options.address} does not answer (${why})`;
    const started = this.#outage === null;
    this.#outage = { since: this.#lastAnswer, reason };
    if (started) this.#options.log(`${reason} since ${this.#lastAnswer.toISOString()}: ${this.#options.meanwhile}`);
  }
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  return error instanceof Error ? error.message : String(error);
}
