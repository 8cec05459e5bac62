/**
 * Unpacks a container's layers in a worker thread (unpack-in-worker.ts starts it): the unpack is
 * synchronous gunzip and file writes, which on the test's own thread would stall the stand-ins and
 * the platform sharing its event loop (Consul's session renewals included) for seconds.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { unpackLayers } from './layer-unpack.js';

const { root, layers } = workerData as { root: string; layers: string[] };
unpackLayers(root, layers).then(
  () => parentPort!.postMessage({ ok: true }),
  (error: unknown) =>
    parentPort!.postMessage({ ok: false, message: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
);
