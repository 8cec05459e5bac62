/** How svc writes the path of a validation issue: `workloads[1].options["max memory"]`. */

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Appends one path segment: `[2]` for indexes, `.name` for keys, `["odd key"]` otherwise. */
export function joinPath(base: string, segment: string | number): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  if (!identifier.test(segment)) return `${base}[${JSON.stringify(segment)}]`;
  return base === '' ? segment : `${base}.${segment}`;
}
