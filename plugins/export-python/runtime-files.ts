/**
 * The runtime every generated package holds, kept as real Python files in
 * runtime/ (type-checked there: test/e2e/app-export-types.test.ts)
 * and read when a client is exported, so that a generated client never
 * depends on this exporter. tsc copies no `.py` into dist/: they are read from
 * the package's own plugins/export-python/runtime/, which package.json "files"
 * ships; this module runs as dist/plugins/export-python/runtime-files.js, three
 * folders below the package root.
 */
import { readFileSync } from 'node:fs';

const RUNTIME_DIR = new URL('../../../plugins/export-python/runtime/', import.meta.url);

/** The runtime's modules, in the order the package lists them. */
export const RUNTIME_FILES = ['_runtime.py', '_decode.py', '_websocket.py'] as const;

/** The source of one of them, as it is in the repository. */
export function runtimeSource(name: (typeof RUNTIME_FILES)[number]): string {
  return readFileSync(new URL(name, RUNTIME_DIR), 'utf8');
}
