"""Manifest v1: the JSON description of an app that the platform reads (docs/manifest.md).

``python -m svc.manifest <file.py | module>`` prints it; ``build_manifest`` is the
pure function behind it.
"""

from ._build import MANIFEST_VERSION, build_manifest, image_id

__all__ = ["MANIFEST_VERSION", "build_manifest", "image_id"]
