/**
 * An ASGI app's own HTTP API, as its OpenAPI description tells it: what a
 * deploy reads from the running app (capture.ts), keeps with the deployment
 * (store.ts), and turns into the interface's `api` (normalize.ts).
 */

/** The OpenAPI document an ASGI app served at deploy time, as it is kept with its version. */
export interface ApiCapture {
  /** The version of the workload it was read from. */
  readonly version: number;
  /** The app's path it was read from (`/openapi.json`). */
  readonly source: string;
  /** When it was read (ISO 8601). */
  readonly capturedAt: string;
  /** The document as the app served it (parsed JSON, at most MAX_OPENAPI_BYTES when served). */
  readonly document: Readonly<Record<string, unknown>>;
}

/** What a deploy did about an ASGI workload's OpenAPI description, said in its output. */
export interface ApiOutcome {
  /** What the interface carries from now on; null: no description. */
  readonly capture: ApiCapture | null;
  /** One line for the user: `OpenAPI description captured from /openapi.json, 3 operations`, or why not. */
  readonly message: string;
}

/**
 * The largest document a deploy keeps, as served: it is stored in one state
 * value, and Consul's values end at 512 KiB (MAX_VALUE_BYTES).
 */
export const MAX_OPENAPI_BYTES = 384 * 1024;
