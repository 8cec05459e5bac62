/** The spawned-call requests the calls e2e tests send (api-calls, api-callbacks), over the fixture test/fixtures/calls. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import type { Call } from '../core/http/api/client.js';
import { upload } from './api-lifecycle-helpers.js';
import { bundleOfFolder, pickledCall } from './run-helpers.js';

export const CALLS_FIXTURE = path.join(packageRoot, 'test', 'fixtures', 'calls');

/** Loads the fixture's manifest and uploads its bundle to the server at `url`. */
export async function uploadCallsFixture(url: string, owner: string): Promise<{ manifest: LoadedManifest; sha256: string }> {
  const manifest = await loadManifest({ target: path.join(CALLS_FIXTURE, 'app.py') });
  const bundle = await bundleOfFolder(CALLS_FIXTURE);
  assert.equal((await upload(url, owner, bundle.bytes, bundle.sha256)).status, 201);
  return { manifest, sha256: bundle.sha256 };
}

/** What the requests need, read at each request (a test restarts its platform). */
export interface CallsClient {
  readonly call: Call;
  readonly owner: string;
  readonly manifest: LoadedManifest;
  readonly sha256: string;
}

export function callRequests(client: () => CallsClient) {
  const statusOf = async (id: string) => {
    const { call, owner } = client();
    return (await call('GET', `/api/v1/calls/${id}`, { token: owner })).json.call;
  };
  return {
    /** `POST /api/v1/calls` of the uploaded fixture's `fn` with these arguments (and more fields). */
    spawn(fn: string, args: unknown[], fields: Record<string, unknown> = {}, token?: string) {
      const { call, owner, manifest, sha256 } = client();
      return call('POST', '/api/v1/calls', {
        token: token ?? owner,
        json: { manifest: manifest.raw, bundle: sha256, function: fn, input: pickledCall(args).toString('base64'), ...fields },
      });
    },
    /** `GET …/outcome`, held up to `wait` seconds. */
    outcome(id: string, wait = 60, token?: string) {
      const { call, owner } = client();
      return call('GET', `/api/v1/calls/${id}/outcome`, { token: token ?? owner, headers: { Prefer: `wait=${wait}` } });
    },
    statusOf,
    /** The call's view once `done` says so. */
    async until(id: string, done: (view: { status: string; attempt: number; callback?: { delivered?: boolean } | null }) => boolean) {
      for (let view = await statusOf(id); ; view = await statusOf(id)) {
        if (done(view)) return view;
        await sleep(20);
      }
    },
  };
}
