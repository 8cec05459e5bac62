/**
 * The one thing svc reads in a requirements file itself: whether a line makes
 * pip open another file (`-r other.txt`, `--requirement=…`, `-c`, `--constraint`),
 * which the build machine does not have. Lines are split as pip splits them
 * (Python's `str.splitlines`); pip parses the rest at build time.
 */

/** Python's `str.splitlines()` boundaries. */
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;
const INCLUDE = /^(?:-[rc]|--requirement\b|--constraint\b)/;

/** The first line (1-based, trimmed) that names another file; null when none does. */
export function includeLine(text: string): { readonly number: number; readonly text: string } | null {
  const lines = text.split(LINE_BREAK);
  for (const [index, line] of lines.entries()) {
    const trimmed = line.trim();
    if (INCLUDE.test(trimmed)) return { number: index + 1, text: trimmed };
  }
  return null;
}
