/**
 * The runtime every generated package holds, kept as real files in runtime/:
 * `runtime.js` (what the generated workload objects run on: the server and
 * token, calls with the platform's `fetch`, Server-Sent Events, WebSocket
 * sessions, typed errors) and `runtime.d.ts` (its types, with no DOM and no
 * Node type, so a project compiles the client whatever its `lib` and
 * `types`). tsc checks them as they are (runtime.js: test/plugins/export-
 * typescript/runtime-files.test.ts; runtime.d.ts: compile.test.ts); they are read when a client is exported, so that a
 * client never depends on this exporter. The build neither compiles nor
 * copies them (tsconfig.json excludes the folder): they are read from the
 * package's own plugins/export-typescript/runtime/, which package.json
 * "files" ships; this module runs as dist/plugins/export-typescript/
 * runtime-files.js, three folders below the package root.
 */
import { readFileSync } from 'node:fs';

const RUNTIME_DIR = new URL('../../../plugins/export-typescript/runtime/', import.meta.url);

/** The runtime's files, in the order the package lists them. */
export const RUNTIME_FILES = ['runtime.js', 'runtime.d.ts'] as const;

/** The source of one of them, as it is in the repository. */
export function runtimeSource(name: (typeof RUNTIME_FILES)[number]): string {
  return readFileSync(new URL(name, RUNTIME_DIR), 'utf8');
}
