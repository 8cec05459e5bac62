/**
 * Completion callbacks: once a call that has a callback URL ended (succeeded, failed, cancelled),
 * the leader POSTs `{"call": <the call's view>, "frame": <its final frame or null>}` there, signed
 * with its workspace's secret (`X-Svc-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`).
 * A network error or an answer other than 2xx is tried again after 1 s, 2 s, 4 s … (at most 60 s
 * apart) for an hour after the call ended, then given up. Every attempt is recorded on the call
 * (compare-and-set), so the API shows them and a new leader, or svc restarted, goes on from the
 * last one. Deliveries run beside the calls, never on their path: a slow receiver delays only its
 * own callback.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallRecords } from './call-records.js';
import { callView } from './call-view.js';
import type { CallbackGuard, CheckedAddress } from './callback-url.js';
import type { CallbackAttempt, CallbackState, CallRecord } from './types.js';

export interface CallbackBackoff {
  /** The wait after the first failed attempt; each next one doubles it. */
  readonly firstMs: number;
  /** The longest wait between two attempts. */
  readonly maxMs: number;
  /** How long after the call ended attempts go on. */
  readonly windowMs: number;
}

export const DEFAULT_CALLBACK_BACKOFF: CallbackBackoff = { firstMs: 1000, maxMs: 60_000, windowMs: 60 * 60_000 };
/** How long one attempt waits for the receiver's answer. */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** How often the leader looks for callbacks left undelivered (a delivery that stopped on a failure of svc's own). */
const RESUME_EVERY_MS = 60_000;
/** The statuses a callback is sent for; an `expired` call's outcome is gone, and so is its callback. */
const DELIVERED_FOR: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

export interface CallbackDeliveryOptions {
  readonly records: CallRecords;
  readonly guard: CallbackGuard;
  /** The workspace's signing secret (core/services/secrets/callback-secrets.ts). */
  readonly secretOf: (workspace: string) => Promise<string>;
  readonly report: (error: unknown) => void;
  readonly backoff?: Partial<CallbackBackoff>;
  readonly now?: () => Date;
}

export class CallbackDelivery {
  readonly #options: CallbackDeliveryOptions;
  readonly #backoff: CallbackBackoff;
  readonly #now: () => Date;
  /** The calls whose callback this replica delivers now, by `<workspace>/<id>`. */
  readonly #delivering = new Set<string>();
  #leading: AbortController | null = null;
  #resumer: NodeJS.Timeout | undefined;

  constructor(options: CallbackDeliveryOptions) {
    this.#options = options;
    this.#backoff = { ...DEFAULT_CALLBACK_BACKOFF, ...options.backoff };
    this.#now = options.now ?? (() => new Date());
  }

  /** Delivers from now on: first the callbacks a previous leader (or svc before a restart) left undelivered. */
  lead(): void {
    this.stop();
    this.#leading = new AbortController();
    this.#resume().catch(this.#options.report);
    this.#resumer = setInterval(() => void this.#resume().catch(this.#options.report), RESUME_EVERY_MS);
    this.#resumer.unref();
  }

  /** Stops delivering (svc stops, or stopped leading): what is undelivered stays recorded for the next leader. */
  stop(): void {
    clearInterval(this.#resumer);
    this.#leading?.abort();
    this.#leading = null;
  }

  /** A call ended: its callback, if it has one, goes now (on the leader; a follower's is found by the leader). */
  due(workspace: string, id: string): void {
    const leading = this.#leading;
    const key = `${workspace}/${id}`;
    if (leading === null || this.#delivering.has(key)) return;
    this.#delivering.add(key);
    this.#deliver(workspace, id, leading.signal)
      .catch((error: unknown) => leading.signal.aborted || this.#options.report(error))
      .finally(() => this.#delivering.delete(key));
  }

  async #resume(): Promise<void> {
    for (const { value: call } of await this.#options.records.all()) {
      if (call.callback && !call.callback.delivered && DELIVERED_FOR.has(call.status)) this.due(call.workspace, call.id);
    }
  }

  /** Attempts until the receiver takes it, the window is over, or svc stops leading. */
  async #deliver(workspace: string, id: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      const entry = await this.#options.records.get(workspace, id);
      const callback = entry?.value.callback;
      if (!entry || !callback || callback.delivered || !DELIVERED_FOR.has(entry.value.status)) return;
      const at = this.#nextAttemptAt(entry.value, callback);
      if (at === null) return;
      const wait = at - this.#now().getTime();
      if (wait > 0) await sleep(wait, undefined, { signal, ref: false }).catch(() => undefined);
      if (signal.aborted) return;
      const attempt = await this.#attempt(entry.value, callback, signal);
      if (signal.aborted) return; // the next leader attempts again
      await this.#record(workspace, id, attempt);
    }
  }

  /** When the next attempt is due (ms since the epoch), or null when the window is over. */
  #nextAttemptAt(call: CallRecord, callback: CallbackState): number | null {
    const ended = Date.parse(call.endedAt ?? call.createdAt);
    const tries = callback.attempts.length;
    const last = callback.attempts.at(-1);
    const at = last === undefined ? ended : Date.parse(last.at) + Math.min(this.#backoff.firstMs * 2 ** (tries - 1), this.#backoff.maxMs);
    return at - ended > this.#backoff.windowMs ? null : at;
  }

  /** One POST: the receiver's status, or why there was none (the URL refused now, no connection, no answer in time). */
  async #attempt(call: CallRecord, callback: CallbackState, signal: AbortSignal): Promise<CallbackAttempt> {
    const now = this.#now();
    const at = now.toISOString();
    try {
      const url = new URL(callback.url);
      const addresses = await this.#options.guard.addresses(url, 'the callback URL');
      const frame = await this.#options.records.outcome(call.workspace, call.id);
      const body = JSON.stringify({ call: callView(call, call.status, frame ?? undefined), frame });
      const timestamp = String(Math.floor(now.getTime() / 1000));
      const secret = await this.#options.secretOf(call.workspace);
      const headers = {
        'Content-Type': 'application/json',
        'User-Agent': 'svc-callbacks/1',
        'X-Svc-Call-Id': call.id,
        'X-Svc-Call-Status': call.status,
        'X-Svc-Timestamp': timestamp,
        'X-Svc-Signature': `v1=${signature(secret, timestamp, body)}`,
      };
      return { at, status: await post(url, addresses, headers, body, signal) };
    } catch (error) {
      return { at, error: (error as Error).message };
    }
  }

  async #record(workspace: string, id: string, attempt: CallbackAttempt): Promise<void> {
    for (;;) {
      const entry = await this.#options.records.get(workspace, id);
      const callback = entry?.value.callback;
      if (!entry || !callback) return;
      const delivered = callback.delivered || (attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300);
      const next: CallRecord = { ...entry.value, callback: { ...callback, attempts: [...callback.attempts, attempt], delivered } };
      if (await this.#options.records.update(next, entry.modifyIndex)) return;
    }
  }
}

/** Hex HMAC-SHA256 of `<timestamp>.<body>` under the secret's UTF-8 bytes: what a receiver computes to compare. */
export function signature(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** POSTs the body to the checked addresses only (no second DNS lookup to race), and answers the status. */
function post(
  url: URL,
  addresses: readonly CheckedAddress[],
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<number> {
  const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  }) as unknown as LookupFunction;
  const timeout = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      lookup,
      agent: false,
      signal: AbortSignal.any([signal, timeout]),
    });
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    request.on('error', (error) =>
      reject(timeout.aborted ? new Error(`the receiver did not answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`) : error),
    );
    request.end(body);
  });
}
