/**
 * Collects validation issues with their paths. Validators take a collector
 * positioned at the value they check and descend with `at()`, so a check never
 * builds path strings itself and never stops at the first problem.
 */
import type { ValidationIssue } from './types.js';

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Appends one path segment: `[2]` for indexes, `.name` for keys, `["odd key"]` otherwise. */
export function joinPath(base: string, segment: string | number): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  if (!identifier.test(segment)) return `${base}[${JSON.stringify(segment)}]`;
  return base === '' ? segment : `${base}.${segment}`;
}

export class IssueCollector {
  private constructor(
    private readonly sink: ValidationIssue[],
    /** Path of the value this collector reports on; '' is the document root. */
    readonly path: string,
  ) {}

  static root(): IssueCollector {
    return new IssueCollector([], '');
  }

  /** A collector for a child value; its issues land in the same list. */
  at(segment: string | number): IssueCollector {
    return new IssueCollector(this.sink, joinPath(this.path, segment));
  }

  /** Records a problem with the value at this path (or at a child of it). */
  add(message: string, segment?: string | number): void {
    const path = segment === undefined ? this.path : joinPath(this.path, segment);
    this.sink.push(Object.freeze({ path: path === '' ? '(root)' : path, message }));
  }

  get count(): number {
    return this.sink.length;
  }

  get issues(): readonly ValidationIssue[] {
    return [...this.sink];
  }
}
