/**
 * What the TypeScript exporter's tests share: the fixtures (interfaces of the
 * examples, the FastAPI example's OpenAPI operations), writing an export into
 * a folder, and the repo's own `tsc` run on a folder's tsconfig.
 */
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AppInterface, ExportedFiles, InterfaceApi } from '../../../core/infra/plugin/types.js';
import { normalizeApi } from '../../../core/services/app-api/normalize.js';
import { packageRoot } from '../../../core/model/paths.js';
import { errorsDts, errorsJs } from '../../../plugins/export-typescript/errors.js';
import { RUNTIME_FILES } from '../../../plugins/export-typescript/runtime-files.js';

const fixtures = path.join(packageRoot, 'test', 'fixtures', 'export');

export function fixtureInterface(name: string): AppInterface {
  return JSON.parse(readFileSync(path.join(fixtures, `${name}.interface.json`), 'utf8')) as AppInterface;
}

/**
 * The OpenAPI operations of examples/asgi-fastapi as the server makes them
 * (core/services/app-api/normalize.ts) from FastAPI's own /openapi.json of the example.
 */
export function fastapiApi(): InterfaceApi {
  const document = JSON.parse(readFileSync(path.join(packageRoot, 'test', 'fixtures', 'openapi', 'fastapi-todos.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  return normalizeApi({ source: '/openapi.json', capturedAt: '2026-11-27T00:00:00.000Z', document }).api;
}

/** `iface` with `api` set on its ASGI workloads that have none. */
export function withApi(iface: AppInterface, api: InterfaceApi): AppInterface {
  return { ...iface, workloads: iface.workloads.map((w) => (w.kind === 'asgi' && !w.api ? { ...w, api } : w)) };
}

export function writeExport(dir: string, exported: ExportedFiles): void {
  for (const file of exported.files) {
    const target = path.join(dir, ...file.path.split('/'));
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, file.contents);
  }
}

/** The runtime's files as they are in the repository, beside the error codes' files the exporter writes (as in a package), into `dir`. */
export function writeRuntimePackage(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const runtime = path.join(packageRoot, 'plugins', 'export-typescript', 'runtime');
  for (const name of RUNTIME_FILES) copyFileSync(path.join(runtime, name), path.join(dir, name));
  writeFileSync(path.join(dir, 'errors.js'), errorsJs());
  writeFileSync(path.join(dir, 'errors.d.ts'), errorsDts());
  return dir;
}

/** Strict and then some: what a careful project turns on. `lib` without DOM and `types` empty: the client must need neither. */
export const STRICT_OPTIONS = {
  strict: true,
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  lib: ['ES2022'],
  types: [] as string[],
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noImplicitOverride: true,
  noUnusedLocals: true,
  skipLibCheck: false,
  forceConsistentCasingInFileNames: true,
};

/** Runs the repo's tsc on `dir`/tsconfig.json, written from `options` and `files`. */
export function tsc(
  dir: string,
  files: readonly string[],
  options: Record<string, unknown> = { ...STRICT_OPTIONS, noEmit: true },
): { status: number | null; output: string } {
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files }, null, 2));
  const bin = path.join(packageRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const run = spawnSync(process.execPath, [bin, '-p', path.join(dir, 'tsconfig.json')], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Declarations without their comments and string literals: what `any` must not appear in. */
export function declarationCode(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');
}

/** Runs `node <script>` in `cwd`, without blocking this process (an in-process platform must keep answering it). */
export function runNode(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script], { cwd, env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}
