"""``svc serve``'s warm helper: one long-lived Python that reads a project on each save.

``python -m svc._dev`` keeps ``svc`` (and what the manifest and the bundler need) imported,
and answers requests on stdin with one JSON line each on stdout (``_helper``): it snapshots
the project as its bundle would (``_snapshot``), says when nothing changed since the version
that runs, and otherwise writes the bundle and, in a forked child that imports the user's
module fresh, builds the manifest exactly as ``python -m svc.manifest`` would (``_describe``).
No new interpreter per save, and never any user code in the helper itself.
"""
