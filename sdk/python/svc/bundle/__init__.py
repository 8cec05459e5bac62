"""Source bundles: the deterministic tar.gz of a project that the platform runs.

``python -m svc.bundle <project dir> [--out FILE] [--max-bytes N]`` writes it and prints
``{"path", "sha256", "size", "files"}`` as one JSON line; ``build_bundle`` is the function
behind it. ``.svcignore`` at the project root (gitignore syntax) and the defaults in
``DEFAULT_PATTERNS`` keep files out. Reference: docs/sdk.md.
"""

from ._build import (
    DEFAULT_MAX_BYTES,
    FIXED_MTIME,
    BundleError,
    BundleResult,
    BundleTooLarge,
    Entry,
    build_bundle,
    check_size,
    collect,
    default_output,
    write_tar_gz,
)
from ._ignore import DEFAULT_PATTERNS, IGNORE_FILE, VENV_MARK, IgnoreRules

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_PATTERNS",
    "FIXED_MTIME",
    "IGNORE_FILE",
    "VENV_MARK",
    "BundleError",
    "BundleResult",
    "BundleTooLarge",
    "Entry",
    "IgnoreRules",
    "build_bundle",
    "check_size",
    "collect",
    "default_output",
    "write_tar_gz",
]
