/** Pickled calls and their NDJSON answers, as the Python client makes and reads them, for the remote-run tests. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createBundle } from '../../core/infra/bundles/create.js';
import { packageRoot } from '../../core/model/paths.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerConfig } from '../../config/schema.js';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { checkAnswer } from '../core/http/api/answer-check.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { upload } from './api-lifecycle-helpers.js';

const python = process.env.SVC_PYTHON ?? 'python3';

export const runFixture = (name: string) => path.join(packageRoot, 'test', 'fixtures', 'runs', name);

/**
 * Runs a Python script on `input` and returns its stdout, once per script and input in this process:
 * the answers are pure functions of the input (pickle's output for the same values is the same
 * bytes), and the run tests ask for the same few calls and results again and again, each a new
 * interpreter otherwise.
 */
function pythonOutput(script: string, input: string): Buffer {
  const key = `${script}\0${input}`;
  let output = outputs.get(key);
  if (output === undefined) {
    output = execFileSync(python, ['-c', script], { input });
    outputs.set(key, output);
  }
  return Buffer.from(output);
}

const outputs = new Map<string, Buffer>();

/** `pickle.dumps({"args": args, "kwargs": kwargs})` of JSON values, made by Python itself. */
export function pickledCall(args: unknown[], kwargs: Record<string, unknown> = {}): Buffer {
  const script =
    'import json, pickle, sys; c = json.load(sys.stdin); sys.stdout.buffer.write(pickle.dumps({"args": c["args"], "kwargs": c["kwargs"]}))';
  return pythonOutput(script, JSON.stringify({ args, kwargs }));
}

/** `pickledCall` of each argument list, made by one Python process, as base64 (a map's inputs). */
export function pickledCalls(argLists: unknown[][]): string[] {
  const script =
    'import base64, json, pickle, sys; print(json.dumps([base64.b64encode(pickle.dumps({"args": a, "kwargs": {}})).decode() for a in json.load(sys.stdin)]))';
  return JSON.parse(pythonOutput(script, JSON.stringify(argLists)).toString()) as string[];
}

/** The JSON of a base64 pickle of a JSON value (a result). */
export function unpickled(base64: string): unknown {
  const script = 'import base64, json, pickle, sys; print(json.dumps(pickle.loads(base64.b64decode(sys.stdin.read()))))';
  return JSON.parse(pythonOutput(script, base64).toString());
}

/** `unpickled` of each, by one Python process. */
export function unpickledAll(base64s: string[]): unknown[] {
  const script = 'import base64, json, pickle, sys; print(json.dumps([pickle.loads(base64.b64decode(b)) for b in json.load(sys.stdin)]))';
  return JSON.parse(pythonOutput(script, JSON.stringify(base64s)).toString()) as unknown[];
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
export async function callRun(
  baseUrl: string,
  token: string,
  runId: string,
  body: Buffer | string,
  contentType = 'application/vnd.svc.call+pickle',
): Promise<CallResult> {
  const response = await fetch(`${baseUrl}/api/v1/runs/${runId}/calls`, {
    method: 'POST',
    body,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': contentType },
  });
  const text = await response.text();
  const type = response.headers.get('content-type');
  checkAnswer('POST', `/api/v1/runs/${runId}/calls`, response.status, type, text);
  if (type?.startsWith('application/x-ndjson')) {
    return {
      status: response.status,
      contentType: type,
      frames: text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Frame),
      json: undefined,
    };
  }
  return { status: response.status, contentType: type, frames: [], json: JSON.parse(text) };
}

export async function bundleOfFolder(folder: string): Promise<{ sha256: string; bytes: Buffer }> {
  const created = await createBundle(folder, { out: path.join(tempDir('svc-bundle-'), 'bundle.tar.gz') });
  return { sha256: created.sha256, bytes: await readFile(created.path) };
}

export interface RunPlatform {
  readonly platform: Platform;
  readonly call: Call;
  readonly owner: string;
  /** The runs fixture (test/fixtures/runs/ok): its manifest and the sha256 of its uploaded bundle. */
  readonly manifest: LoadedManifest;
  readonly sha256: string;
  /** Unexpected errors the platform reported. */
  readonly reports: unknown[];
}

/** A real platform with the runs fixture's bundle uploaded, as the remote-run tests start from. */
export async function startRunPlatform(config: ServerConfig = testConfig()): Promise<RunPlatform> {
  const reports: unknown[] = [];
  const platform = await startPlatform({ config, report: (error) => reports.push(error) });
  const owner = platform.ownerToken.secret;
  const manifest = await loadManifest({ target: path.join(runFixture('ok'), 'app.py') });
  const bundle = await bundleOfFolder(runFixture('ok'));
  assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
  return { platform, call: apiClient(platform.url), owner, manifest, sha256: bundle.sha256, reports };
}

/** Starts a run of the fixture's function `fn` and waits until its container is up (its status says `ready`). */
export async function readyRun(runs: RunPlatform, fn: string, fields: Record<string, unknown> = {}): Promise<string> {
  const created = await runs.call('POST', '/api/v1/runs', {
    token: runs.owner,
    json: { manifest: runs.manifest.raw, bundle: runs.sha256, function: fn, ...fields },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.json.run.id as string;
  for (let status = created.json.run.status; status !== 'ready'; await sleep(50)) {
    status = (await runs.call('GET', `/api/v1/runs/${id}`, { token: runs.owner })).json.run.status;
    assert.notEqual(status, 'failed');
  }
  return id;
}
