/**
 * The record a replica keeps under `gateway/load/<replicaId>`: its gateway's
 * load per unit, written by its LoadReporter (load-report.ts) and summed by
 * the leader's PeerLoad (peer-load.ts). Times are durations since the
 * writer's last activity, never timestamps: the replicas' clocks need not agree.
 */
import { storedNumber, storedObject } from '../../model/store/stored-fields.js';
import { SvcError } from '../../model/errors.js';

export const LOAD_PREFIX = 'gateway/load/';

export function loadKey(replicaId: string): string {
  return LOAD_PREFIX + replicaId;
}

export interface InstanceLoad {
  /** Requests in flight on it through this replica. */
  readonly inFlight: number;
  /** How long ago (ms, at the time of writing) a request last took or gave back a slot on it here; null if never. */
  readonly idleMs: number | null;
}

export interface UnitLoad {
  /** Requests waiting on this replica for a slot. */
  readonly queued: number;
  readonly instances: Readonly<Record<string, InstanceLoad>>;
}

/** The JSON value; only units and instances with something to say are listed. */
export interface LoadRecord {
  readonly version: 1;
  readonly units: Readonly<Record<string, UnitLoad>>;
}

/** A decoded record, keyed by maps (unit and instance ids are data, not field names). */
export type DecodedLoad = ReadonlyMap<string, { readonly queued: number; readonly instances: ReadonlyMap<string, InstanceLoad> }>;

/** Checks a parsed record; `state_corrupt` naming the key and the field when it is not one. */
export function parseLoadRecord(value: unknown, key: string): DecodedLoad {
  const record = storedObject(value, key);
  if (record.version !== 1) throw corrupt(key, `has version ${JSON.stringify(record.version)}, not 1`);
  const units = new Map<string, { queued: number; instances: Map<string, InstanceLoad> }>();
  for (const [unit, unitValue] of Object.entries(storedObject(record.units, key))) {
    const unitRecord = storedObject(unitValue, key);
    const instances = new Map<string, InstanceLoad>();
    for (const [id, instanceValue] of Object.entries(storedObject(unitRecord.instances, key))) {
      const instance = storedObject(instanceValue, key);
      const idleMs =
        instance.idleMs === null ? null : count(storedNumber(instance, 'idleMs', key), `units.${unit}.instances.${id}.idleMs`, key);
      instances.set(id, {
        inFlight: count(storedNumber(instance, 'inFlight', key), `units.${unit}.instances.${id}.inFlight`, key),
        idleMs,
      });
    }
    units.set(unit, { queued: count(storedNumber(unitRecord, 'queued', key), `units.${unit}.queued`, key), instances });
  }
  return units;
}

function count(value: number, field: string, key: string): number {
  if (value < 0) throw corrupt(key, `has a negative "${field}"`);
  return value;
}

function corrupt(key: string, problem: string): SvcError {
  return new SvcError('state_corrupt', `the load record ${JSON.stringify(key)} ${problem}`, { details: { key } });
}
