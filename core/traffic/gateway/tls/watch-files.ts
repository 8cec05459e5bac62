/**
 * Calls `onChange` once things settle after any change to the watched files
 * or folder. The folders are watched, not the files: tools replace a
 * certificate by renaming a new file over it (certbot, Kubernetes secret
 * volumes), which a watch on the old file's inode would miss.
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';

/** Writers touch a pair as two files: one reload after both, not one per event. */
export const RELOAD_DEBOUNCE_MS = 300;

export interface FileWatch {
  close(): void;
}

export function watchFiles(
  targets: { readonly files: readonly string[]; readonly dir: string | null },
  onChange: () => void,
  report: (error: unknown) => void,
  debounceMs = RELOAD_DEBOUNCE_MS,
): FileWatch {
  const folders = new Set(targets.files.map((file) => path.dirname(file)));
  if (targets.dir !== null) folders.add(targets.dir);
  let timer: NodeJS.Timeout | undefined;
  const changed = () => {
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  };
  const watchers: FSWatcher[] = [];
  for (const folder of folders) {
    try {
      // A folder removed later ends its watch with an error: said once, the rest keep watching.
      watchers.push(watch(folder, { persistent: false }, changed).on('error', report));
    } catch (error) {
      report(error);
    }
  }
  return {
    close() {
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}
