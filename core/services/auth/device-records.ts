/**
 * How device authorizations are stored. The device code is a bearer secret
 * (whoever holds it collects the token), so it is stored only as its SHA-256
 * hash: `device-auth/codes/<hash>` holds the request, and
 * `device-auth/user-codes/<USERCODE>` points from the code a person types to
 * that hash. Both expire with the request and are deleted by `sweep()`.
 */
import { storedNumber, storedObject, storedOneOf, storedString, storedStringOrNull, storedTime } from '../../model/store/stored-fields.js';

export const DEVICE_AUTH_PREFIX = 'device-auth/';
export const DEVICE_CODES_PREFIX = `${DEVICE_AUTH_PREFIX}codes/`;
export const USER_CODES_PREFIX = `${DEVICE_AUTH_PREFIX}user-codes/`;

export const DEVICE_STATUSES = ['pending', 'approved', 'denied', 'issued'] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

export interface DeviceRecord {
  /** Stored form, no hyphen. */
  readonly userCode: string;
  readonly clientName: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  /** Grows by 5 s with every `slow_down` (RFC 8628 §3.5). */
  readonly intervalSeconds: number;
  readonly lastPolledAt: string | null;
  /** `issued` is set (compare-and-set) before the token is made, so it is made once. */
  readonly status: DeviceStatus;
  /** Who approved, for which workspace; null until approved. */
  readonly approvedWorkspace: string | null;
  readonly approvedBy: string | null;
}

export interface UserCodeRecord {
  readonly deviceHash: string;
  readonly expiresAt: string;
}

export function deviceKey(deviceHash: string): string {
  return `${DEVICE_CODES_PREFIX}${deviceHash}`;
}

export function userCodeKey(userCode: string): string {
  return `${USER_CODES_PREFIX}${userCode}`;
}

export function parseDeviceRecord(value: unknown, key: string): DeviceRecord {
  const record = storedObject(value, key);
  storedTime(record, 'expiresAt', key);
  return {
    userCode: storedString(record, 'userCode', key),
    clientName: storedString(record, 'clientName', key),
    createdAt: storedString(record, 'createdAt', key),
    expiresAt: storedString(record, 'expiresAt', key),
    intervalSeconds: storedNumber(record, 'intervalSeconds', key),
    lastPolledAt: storedStringOrNull(record, 'lastPolledAt', key),
    status: storedOneOf(record, 'status', key, DEVICE_STATUSES),
    approvedWorkspace: storedStringOrNull(record, 'approvedWorkspace', key),
    approvedBy: storedStringOrNull(record, 'approvedBy', key),
  };
}

export function parseUserCodeRecord(value: unknown, key: string): UserCodeRecord {
  const record = storedObject(value, key);
  storedTime(record, 'expiresAt', key);
  return { deviceHash: storedString(record, 'deviceHash', key), expiresAt: storedString(record, 'expiresAt', key) };
}
