/**
 * File events `svc serve` does not even look at: editor temporaries (swap
 * files, backups, lock files, atomic-save temporaries) and what every bundle
 * leaves out by default (sdk/python/svc/bundle/_ignore.py: `.git`,
 * `__pycache__`, `*.pyc`, virtualenvs…). Folders named by `.svcignore` are
 * not watched at all (the helper lists the folders the bundle holds); any
 * other event leads to a snapshot of the project, whose digest decides
 * whether anything changed.
 */

/** Must match EDITOR_TEMPORARY in sdk/python/svc/_dev/_snapshot.py (files the preview's bundle leaves out). */
const EDITOR_TEMPORARY = new RegExp(
  '(?:^|/)(?:' +
    '\\.[^/]*\\.sw[a-p]|[^/]*\\.sw[px]|4913|[^/]*~' + // vim: swap files, its write test, backups
    '|\\.#[^/]*|#[^/]*#' + // emacs: lock links, autosaves
    '|[^/]*___jb_(?:tmp|old|bak)___' + // JetBrains safe write
    '|\\.goutputstream-[^/]*|[^/]*\\.crswap|\\.~lock\\.[^/]*#|[^/]*\\.tmp\\.\\d+(?:\\.\\d+)?' + // gedit, Chrome, LibreOffice, atomic writers
    ')$',
);

/** Folder names the bundle leaves out wherever they are (its DEFAULT_PATTERNS ending in `/`, and `.git`…). */
export const IGNORED_FOLDERS: ReadonlySet<string> = new Set([
  '.git',
  '.hg',
  '.svn',
  '__pycache__',
  '.venv',
  'venv',
  'node_modules',
  '.svc',
  '.mypy_cache',
  '.pytest_cache',
  '.ruff_cache',
  '.tox',
]);

const IGNORED_FILES = /(?:^|\/)(?:[^/]*\.py[co]|\.DS_Store)$/;

export function isEditorTemporary(relativePath: string): boolean {
  return EDITOR_TEMPORARY.test(relativePath);
}

/** Whether an event on this project-relative path can be dropped at once. */
export function isIgnoredEvent(relativePath: string): boolean {
  if (isEditorTemporary(relativePath) || IGNORED_FILES.test(relativePath)) return true;
  return relativePath.split('/').some((part) => IGNORED_FOLDERS.has(part));
}
