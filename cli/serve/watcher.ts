/**
 * Watches a project for `svc serve`: one non-recursive `fs.watch` (inotify
 * on Linux) per folder the bundle holds, so that `.git`, virtualenvs,
 * `node_modules` and what `.svcignore` leaves out cost no watch at all
 * (Node's recursive watch would walk and watch all of them). The folder list
 * comes with every snapshot of the project (`sync`); a folder created later
 * shows up as an event in its parent, whose snapshot then lists it.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { IGNORED_FOLDERS, isIgnoredEvent } from './ignore.js';

export class ProjectWatcher {
  readonly root: string;
  readonly #onChange: (relativePath: string) => void;
  readonly #warn: (message: string) => void;
  readonly #watchers = new Map<string, FSWatcher>();
  #warned = false;
  #closed = false;

  /**
   * `onChange` gets project-relative POSIX paths, editor temporaries and
   * default-ignored names left out; `warn` is told once when a folder cannot
   * be watched (the system's limit on watches, say).
   */
  constructor(root: string, onChange: (relativePath: string) => void, warn: (message: string) => void = () => {}) {
    this.root = root;
    this.#onChange = onChange;
    this.#warn = warn;
  }

  /** Watches the root and these folders (project-relative), and no other; returns those it began to watch. */
  sync(folders: readonly string[]): string[] {
    if (this.#closed) return [];
    const wanted = new Set(['', ...folders.map((folder) => folder.split(path.sep).join('/'))]);
    for (const [folder, watcher] of this.#watchers) {
      if (!wanted.has(folder)) {
        watcher.close();
        this.#watchers.delete(folder);
      }
    }
    const added: string[] = [];
    for (const folder of wanted) {
      if (this.#watchers.has(folder)) continue;
      if (this.#watch(folder)) added.push(folder);
    }
    return added;
  }

  /** How many folders are watched. */
  get size(): number {
    return this.#watchers.size;
  }

  close(): void {
    this.#closed = true;
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
  }

  #watch(folder: string): boolean {
    let watcher: FSWatcher;
    try {
      // Not persistent: watching alone does not keep svc running.
      watcher = watch(path.join(this.root, folder), { persistent: false }, (_event, name) => {
        const relative = name === null ? folder : folder === '' ? name.toString() : `${folder}/${name.toString()}`;
        if (relative !== '' && !isIgnoredEvent(relative)) this.#onChange(relative);
      });
    } catch (error) {
      // Gone already: the next snapshot no longer lists it. Anything else means changes there go unseen.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && !this.#warned) {
        this.#warned = true;
        this.#warn(
          `cannot watch ${path.join(this.root, folder)} (${(error as Error).message}): changes in it are not reloaded` +
            ((error as NodeJS.ErrnoException).code === 'ENOSPC'
              ? '; raise fs.inotify.max_user_watches, or leave big folders out with .svcignore'
              : ''),
        );
      }
      return false;
    }
    watcher.on('error', () => {
      // The folder went away (or was replaced): a snapshot says what the project holds now.
      watcher.close();
      if (this.#watchers.get(folder) === watcher) this.#watchers.delete(folder);
      if (!this.#closed && folder !== '') this.#onChange(folder);
    });
    this.#watchers.set(folder, watcher);
    return true;
  }
}

/**
 * The project's folders without the bundle's default exclusions (for when no
 * helper lists them): what `sync` would get, save for `.svcignore`, which
 * only makes a few more folders watched.
 */
export async function listFolders(root: string, exclude: readonly string[] = [], prefix = ''): Promise<string[]> {
  const found: string[] = [];
  let entries;
  try {
    entries = await readdir(path.join(root, prefix), { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || IGNORED_FOLDERS.has(entry.name)) continue;
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (exclude.some((dir) => path.resolve(dir) === path.resolve(root, relative))) continue;
    const venv = await stat(path.join(root, relative, 'pyvenv.cfg')).catch(() => null);
    if (venv?.isFile()) continue;
    found.push(relative, ...(await listFolders(root, exclude, relative)));
  }
  return found;
}
