/** Maps: one function of a run called once per input, inputs streamed in and outputs streamed out (docs/api.md "Maps"). */

/**
 * - `running`: inputs are still coming or being answered;
 * - `succeeded`: the last input came and every input was answered (failures included: each has its error frame);
 * - `cancelled`: `DELETE`, its run ended, or nobody read its outputs for a while; inputs not started then were cancelled.
 */
export type MapStatus = 'running' | 'succeeded' | 'cancelled';

/** Why a map was cancelled: its client deleted it, its run ended, or nobody read its outputs (its caller died). */
export type CancelReason = 'deleted' | 'run_ended' | 'unread';

/** What a map id looks like: `map-` and 16 hex digits. */
export const MAP_ID_SOURCE = 'map-[0-9a-f]{16}';

/** Inputs of one map by where they are; `received` is the sum of the others. */
export interface MapCounts {
  readonly received: number;
  /** Received, not started: waiting for room in the map's window, for the run, or for a slot on a container. */
  readonly queued: number;
  /** A container is answering them. */
  readonly running: number;
  /** Answered with a result. */
  readonly succeeded: number;
  /** Answered with an error frame (the function raised, its worker died or timed out, svc could not call it). */
  readonly failed: number;
  /** Never started: the map was cancelled first. */
  readonly cancelled: number;
}

export interface MapView {
  /** `map-<16 hex>`: unguessable, unique in the server. */
  readonly id: string;
  readonly run: string;
  readonly function: string;
  readonly status: MapStatus;
  /** Null unless `cancelled`. */
  readonly cancelReason: CancelReason | null;
  readonly inputs: MapCounts;
  /** The client said that no input follows (`?last=true`). */
  readonly lastReceived: boolean;
  readonly createdAt: string;
  /** When its last input was answered, or, cancelled, when the last one running ended; null until then. */
  readonly endedAt: string | null;
  /** Why its queued inputs wait, when there is more to say than busy containers (one waits for a GPU); absent otherwise. */
  readonly waiting?: string;
}

/** One input of a batch, checked: its place in the map and the pickled call. */
export interface MapInput {
  readonly index: number;
  readonly pickle: Buffer;
}
