"""``python -m svc.bundle <project dir> [--out FILE] [--max-bytes N]``.

Writes the project's bundle and prints one JSON line on stdout:
``{"path": ..., "sha256": ..., "size": ..., "files": N}``. Warnings (skipped links and
special files) go to stderr. Exit codes: 0 written; 1 the project cannot be bundled (a
missing folder, an unreadable file); 2 wrong usage; 3 the project is larger than --max-bytes
(the message lists the biggest files).
"""

from __future__ import annotations

import argparse
import json
import sys

from ._build import DEFAULT_MAX_BYTES, BundleError, BundleTooLarge, build_bundle


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"svc bundle: {message}", file=sys.stderr)
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m svc.bundle",
        description="Writes the deterministic tar.gz of a project (same files, same sha256), "
        "leaving out what .svcignore and the defaults exclude, and prints its path, sha256, "
        "size and number of files as one JSON line.",
    )
    parser.add_argument("project", help="the project folder")
    parser.add_argument("--out", help="where to write the bundle (default: <project>/.svc/bundle.tar.gz)")
    parser.add_argument(
        "--max-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_BYTES,
        help=f"largest total size of the bundled files (default: {DEFAULT_MAX_BYTES}, 100 MiB)",
    )
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of bytes: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return value


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)

    def warn(message: str) -> None:
        print(f"svc bundle: warning: {message}", file=sys.stderr)

    try:
        result = build_bundle(args.project, args.out, max_bytes=args.max_bytes, warn=warn)
    except BundleTooLarge as error:
        print(f"svc bundle: {error}", file=sys.stderr)
        return 3
    except BundleError as error:
        print(f"svc bundle: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"svc bundle: cannot write the bundle: {error}", file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(result.as_json()) + "\n")
    return 0
