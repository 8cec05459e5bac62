/** Pickled calls and their NDJSON answers, as the Python client makes and reads them, for the remote-run tests. */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createBundle } from '../../core/bundles/create.js';
import { packageRoot } from '../../core/paths.js';
import { tempDir } from '../helpers/config.js';

const python = process.env.SVC_PYTHON ?? 'python3';

export const runFixture = (name: string) => path.join(packageRoot, 'test', 'fixtures', 'runs', name);

/** `pickle.dumps({"args": args, "kwargs": kwargs})` of JSON values, made by Python itself. */
export function pickledCall(args: unknown[], kwargs: Record<string, unknown> = {}): Buffer {
  const script = 'import json, pickle, sys; c = json.load(sys.stdin); sys.stdout.buffer.write(pickle.dumps({"args": c["args"], "kwargs": c["kwargs"]}))';
  return execFileSync(python, ['-c', script], { input: JSON.stringify({ args, kwargs }) });
}

/** The JSON of a base64 pickle of a JSON value (a result). */
export function unpickled(base64: string): unknown {
  const script = 'import base64, json, pickle, sys; print(json.dumps(pickle.loads(base64.b64decode(sys.stdin.read()))))';
  return JSON.parse(execFileSync(python, ['-c', script], { input: base64 }).toString());
}

export interface Frame {
  readonly type: 'log' | 'result' | 'error';
  readonly stream?: string;
  readonly line?: string;
  readonly pickle?: string | null;
  readonly exception?: string;
  readonly traceback?: string | null;
  readonly code?: string;
}

export interface CallResult {
  readonly status: number;
  readonly contentType: string | null;
  readonly frames: Frame[];
  /** The parsed body when it is not NDJSON (an error answer). */
  readonly json: any;
}

/** POST /api/v1/runs/:id/calls with a pickled call; the answer's frames (or its JSON error). */
export async function callRun(baseUrl: string, token: string, runId: string, body: Buffer | string, contentType = 'application/vnd.svc.call+pickle'): Promise<CallResult> {
  const response = await fetch(`${baseUrl}/api/v1/runs/${runId}/calls`, { method: 'POST', body, headers: { Authorization: `Bearer ${token}`, 'Content-Type': contentType } });
  const text = await response.text();
  const type = response.headers.get('content-type');
  if (type?.startsWith('application/x-ndjson')) {
    return { status: response.status, contentType: type, frames: text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Frame), json: undefined };
  }
  return { status: response.status, contentType: type, frames: [], json: JSON.parse(text) };
}

export async function bundleOfFolder(folder: string): Promise<{ sha256: string; bytes: Buffer }> {
  const created = await createBundle(folder, { out: path.join(tempDir('svc-bundle-'), 'bundle.tar.gz') });
  return { sha256: created.sha256, bytes: await readFile(created.path) };
}
