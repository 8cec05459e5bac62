/** `unpackLayers` off the event loop: in a worker thread (unpack-worker.ts), resolved when it is done. */
import { Worker } from 'node:worker_threads';

export function unpackLayersInWorker(root: string, layers: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./unpack-worker.js', import.meta.url), { workerData: { root, layers: [...layers] } });
    let settled = false;
    worker.once('message', (outcome: { ok: boolean; message?: string }) => {
      settled = true;
      if (outcome.ok) resolve();
      else reject(new Error(`unpacking the image's layers failed: ${outcome.message}`));
    });
    worker.once('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the layer unpacking worker exited with ${code} before it was done`));
    });
  });
}
