/**
 * The device authorization grant (RFC 8628) behind `svc login`: the CLI
 * starts a request and shows a short user code; a signed-in account approves
 * it in the browser; meanwhile the CLI polls with the device code and, once
 * approved, receives a new token of the approver's workspace — exactly once.
 */
import { SvcError } from '../../model/errors.js';
import type { Principal } from '../../model/principal.js';
import { getJson, putJson, type JsonEntry } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import { DeviceFlowError } from './device-errors.js';
import {
  DEVICE_CODES_PREFIX,
  deviceKey,
  parseDeviceRecord,
  parseUserCodeRecord,
  USER_CODES_PREFIX,
  userCodeKey,
  type DeviceRecord,
  type UserCodeRecord,
} from './device-records.js';
import { looksLikeSecret, randomSecret, sha256Hex } from '../../model/one-time-secrets.js';
import { storedJson } from '../../model/store/stored-fields.js';
import type { Tokens } from './token-service.js';
import { formatUserCode, generateUserCode, normalizeUserCode } from './user-code.js';

export interface DeviceFlowOptions {
  /**
   * The page where people type the code, e.g. `http://127.0.0.1:7420/device`; a function
   * when it is known only later (the server's URL once it listens on a free port).
   */
  readonly verificationUri: string | (() => string);
  readonly clock?: Clock;
  /** How long a request may wait for approval (default 600 s). */
  readonly expiresInSeconds?: number;
  /** The polling interval the client starts with (default 5 s, the RFC's default). */
  readonly intervalSeconds?: number;
}

/** RFC 8628 §3.2, field for field. */
export interface DeviceAuthorizationResponse {
  readonly device_code: string;
  readonly user_code: string;
  readonly verification_uri: string;
  readonly verification_uri_complete: string;
  readonly expires_in: number;
  readonly interval: number;
}

/** RFC 6749 §5.1, plus which workspace and token id the new token has. */
export interface DeviceTokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly workspace: string;
  readonly token_id: string;
}

/** What the approval page shows about a pending request. */
export interface PendingDeviceRequest {
  readonly userCode: string;
  readonly clientName: string;
  readonly expiresAt: string;
}

/** RFC 8628 §3.5: after `slow_down`, the interval grows by 5 s for all later requests. */
const SLOW_DOWN_STEP_SECONDS = 5;
/** Short enough that the token's name `svc login (<client name>)` stays within the 100 characters token names allow. */
const CLIENT_NAME_MAX_LENGTH = 80;

export class DeviceAuthorizations {
  readonly #store: StateStore;
  readonly #tokens: Tokens;
  readonly #clock: Clock;
  readonly #verificationUri: () => string;
  readonly #expiresInSeconds: number;
  readonly #intervalSeconds: number;

  constructor(store: StateStore, tokens: Tokens, options: DeviceFlowOptions) {
    this.#store = store;
    this.#tokens = tokens;
    this.#clock = options.clock ?? systemClock;
    const uri = options.verificationUri;
    this.#verificationUri = typeof uri === 'string' ? () => uri : uri;
    this.#expiresInSeconds = options.expiresInSeconds ?? 600;
    this.#intervalSeconds = options.intervalSeconds ?? 5;
  }

  async start(input: { clientName?: unknown } = {}): Promise<DeviceAuthorizationResponse> {
    const clientName = checkClientName(input.clientName);
    const now = this.#clock();
    const expiresAt = isoAt(now + this.#expiresInSeconds * 1000);
    const deviceCode = randomSecret();
    const deviceHash = sha256Hex(deviceCode);
    // Claim a free user code first (cas 0): two live requests never share one.
    let userCode: string | null = null;
    for (let attempt = 0; attempt < 5 && userCode === null; attempt++) {
      const candidate = generateUserCode();
      const pointer: UserCodeRecord = { deviceHash, expiresAt };
      if (await putJson(this.#store, userCodeKey(candidate), pointer, { cas: 0 })) userCode = candidate;
    }
    if (userCode === null) throw new SvcError('internal', 'could not find a free user code in 5 attempts');
    const record: DeviceRecord = {
      userCode,
      clientName,
      createdAt: isoAt(now),
      expiresAt,
      intervalSeconds: this.#intervalSeconds,
      lastPolledAt: null,
      status: 'pending',
      approvedWorkspace: null,
      approvedBy: null,
    };
    await putJson(this.#store, deviceKey(deviceHash), record, { cas: 0 });
    const shown = formatUserCode(userCode);
    const verificationUri = this.#verificationUri();
    return {
      device_code: deviceCode,
      user_code: shown,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${shown}`,
      expires_in: this.#expiresInSeconds,
      interval: this.#intervalSeconds,
    };
  }

  /** The pending request a typed code belongs to; `not_found` when there is none (or it expired). */
  async pending(userCode: unknown): Promise<PendingDeviceRequest> {
    const { value } = await this.#findPending(normalizeUserCode(userCode));
    return { userCode: formatUserCode(value.userCode), clientName: value.clientName, expiresAt: value.expiresAt };
  }

  /**
   * Approves the request for `workspace`, on behalf of `approver` (a signed-in
   * account acting in that workspace; `forbidden` otherwise). The token the
   * client then receives acts as the approver in that workspace.
   */
  async approve(userCode: unknown, approver: Principal, workspace: string): Promise<void> {
    if (approver.workspace !== workspace) {
      throw new SvcError(
        'forbidden',
        `${approver.subject} is signed in to workspace ${JSON.stringify(approver.workspace)} and cannot approve a sign-in to ${JSON.stringify(workspace)}`,
      );
    }
    await this.#decide(normalizeUserCode(userCode), { status: 'approved', approvedWorkspace: workspace, approvedBy: approver.subject });
  }

  /** Denies the request: the client's next poll gets `access_denied`. */
  async deny(userCode: unknown): Promise<void> {
    await this.#decide(normalizeUserCode(userCode), { status: 'denied' });
  }

  /**
   * The token endpoint. Throws a `DeviceFlowError` (RFC 8628 §3.5):
   * `authorization_pending` while undecided, `slow_down` when polled sooner
   * than the interval (which then grows by 5 s), `access_denied`,
   * `expired_token`, and `invalid_grant` for an unknown device code or one
   * whose token was already issued (a second poll after success).
   */
  async poll(deviceCode: unknown): Promise<DeviceTokenResponse> {
    if (deviceCode === undefined || deviceCode === null || deviceCode === '') throw new DeviceFlowError('invalid_request');
    if (!looksLikeSecret(deviceCode)) throw new DeviceFlowError('invalid_grant');
    const key = deviceKey(sha256Hex(deviceCode));
    // Compare-and-set loop: a concurrent poll, approval or denial makes us re-read, never overwrite.
    for (;;) {
      const entry = await getJson(this.#store, key, parseDeviceRecord);
      if (entry === null || entry.value.status === 'issued') throw new DeviceFlowError('invalid_grant');
      const record = entry.value;
      const now = this.#clock();
      if (now >= Date.parse(record.expiresAt)) {
        await this.#remove(entry);
        throw new DeviceFlowError('expired_token');
      }
      if (record.status === 'denied') {
        await this.#remove(entry);
        throw new DeviceFlowError('access_denied');
      }
      if (record.status === 'approved') {
        if (!(await putJson(this.#store, key, { ...record, status: 'issued' }, { cas: entry.modifyIndex }))) continue;
        return this.#issue(entry);
      }
      const tooSoon = record.lastPolledAt !== null && now - Date.parse(record.lastPolledAt) < record.intervalSeconds * 1000;
      const polled: DeviceRecord = {
        ...record,
        lastPolledAt: isoAt(now),
        intervalSeconds: tooSoon ? record.intervalSeconds + SLOW_DOWN_STEP_SECONDS : record.intervalSeconds,
      };
      if (!(await putJson(this.#store, key, polled, { cas: entry.modifyIndex }))) continue;
      throw tooSoon
        ? new DeviceFlowError('slow_down', `polling too fast; wait ${polled.intervalSeconds} seconds between requests`)
        : new DeviceFlowError('authorization_pending');
    }
  }

  /** Deletes expired requests and their user codes; returns how many keys went. For a periodic sweep. */
  async sweep(): Promise<number> {
    const now = this.#clock();
    let removed = 0;
    for (const [prefix, parse] of [
      [DEVICE_CODES_PREFIX, parseDeviceRecord],
      [USER_CODES_PREFIX, parseUserCodeRecord],
    ] as const) {
      for (const entry of await this.#store.list(prefix)) {
        if (now < Date.parse(storedJson<{ expiresAt: string }>(entry, parse).expiresAt)) continue;
        if (await this.#store.delete(entry.key, { cas: entry.modifyIndex })) removed++;
      }
    }
    return removed;
  }

  async #issue(entry: JsonEntry<DeviceRecord>): Promise<DeviceTokenResponse> {
    const { approvedWorkspace, approvedBy, clientName } = entry.value;
    if (approvedWorkspace === null || approvedBy === null) {
      throw new SvcError('state_corrupt', `the state record ${JSON.stringify(entry.key)} is approved without an approver`, {
        details: { key: entry.key },
      });
    }
    try {
      const { secret, token } = await this.#tokens.create(
        { name: `svc login (${clientName})` },
        { workspace: approvedWorkspace, subject: approvedBy },
      );
      return { access_token: secret, token_type: 'Bearer', workspace: token.workspace, token_id: token.id };
    } finally {
      await this.#remove(entry);
    }
  }

  /** Applies an approval or denial to the pending request with this (stored-form) user code. */
  async #decide(userCode: string, decision: Partial<DeviceRecord>): Promise<void> {
    for (;;) {
      const entry = await this.#findPending(userCode);
      if (await putJson(this.#store, entry.key, { ...entry.value, ...decision }, { cas: entry.modifyIndex })) return;
    }
  }

  async #findPending(userCode: string): Promise<JsonEntry<DeviceRecord>> {
    const shown = formatUserCode(userCode);
    const pointer = await getJson(this.#store, userCodeKey(userCode), parseUserCodeRecord);
    const entry = pointer === null ? null : await getJson(this.#store, deviceKey(pointer.value.deviceHash), parseDeviceRecord);
    if (entry === null || this.#clock() >= Date.parse(entry.value.expiresAt)) {
      throw new SvcError('not_found', `there is no sign-in request with the code ${shown}; it may have expired`, {
        hint: 'Run `svc login` again and type the new code.',
      });
    }
    if (entry.value.status !== 'pending') {
      throw new SvcError('conflict', `the sign-in request ${shown} was already ${entry.value.status === 'denied' ? 'denied' : 'approved'}`);
    }
    return entry;
  }

  /** Deletes a request and its user code (best effort: `sweep` catches what a crash leaves). */
  async #remove(entry: JsonEntry<DeviceRecord>): Promise<void> {
    await this.#store.delete(userCodeKey(entry.value.userCode));
    await this.#store.delete(entry.key);
  }
}

function checkClientName(name: unknown): string {
  if (name === undefined || name === null) return 'svc CLI';
  if (typeof name !== 'string')
    throw new SvcError('bad_request', `client_name must be a string, not ${typeof name}`, { details: { field: 'client_name' } });
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > CLIENT_NAME_MAX_LENGTH || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    throw new SvcError('bad_request', `client_name must be 1 to ${CLIENT_NAME_MAX_LENGTH} characters without control characters`, {
      details: { field: 'client_name' },
    });
  }
  return trimmed;
}
