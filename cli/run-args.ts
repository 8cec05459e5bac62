/**
 * `svc run <target> [args…]` passes the function's arguments through
 * untouched, `--name value` pairs included, which sade (through mri) would
 * parse as svc's own options, reorder, coerce to numbers, or answer with
 * `--help`/`--version`. So the command line of `svc run` is split here,
 * before sade sees it: everything after the target goes to the function as
 * it is. `svc run`, `svc run --help` and `svc run -h` are left to sade (usage
 * and help).
 */

/** `{target, args}` when `argv` (without node and the script) is a `svc run` call with a target; null otherwise. */
export function splitRunArgs(argv: readonly string[]): { target: string; args: string[] } | null {
  if (argv[0] !== 'run') return null;
  const target = argv[1];
  if (target === undefined || target.startsWith('-')) return null;
  return { target, args: argv.slice(2) };
}
