"""``python -m svc.run <file.py | module>:<function> [args...]``: the engine of ``svc run``.

Runs one function of an app remotely, as ``<function>.remote(...)`` does, with its
arguments taken from the command line and converted by the parameters' annotations;
prints the result on stdout and everything else on stderr. ``main(argv)`` returns the
exit code. Reference: docs/cli.md, "svc run".
"""

from ._cli import main

__all__ = ["main"]
