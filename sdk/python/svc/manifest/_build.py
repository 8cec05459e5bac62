"""``build_manifest(app, entry)``: the Manifest v1 document of an App, as plain JSON data."""

from __future__ import annotations

import hashlib
import inspect
import json
from typing import Any

from .. import __version__
from .._app import App
from .._cls import to_wire
from .._image import Image, current_python_version
from .._options import manifest_value
from .._schema import parameters_schema, returns_schema
from .._workloads import Workload

MANIFEST_VERSION = 1


INLINE_SECRETS = "inline_secrets"
"""The key of the ``Secret.from_dict`` values in what ``python -m svc.manifest`` prints: a list whose
entry ``i`` a workload's ``secrets`` names as ``@<i>``. Senders move it beside the manifest."""


IMAGE_ID_KEYS = ("python_packages", "python_version")
"""Always part of an image's id; ``requirements_files`` and ``env`` are too, when the spec has them
(non-empty), so that an image without them keeps the id it had before they existed."""
OPTIONAL_IMAGE_KEYS = ("requirements_files", "env")


def image_id(spec: dict[str, Any]) -> str:
    """``img-`` + 16 hex digits of the SHA-256 of the canonical JSON of the image spec.

    The platform computes the same (core/model/workload/manifest/image-id.ts) and refuses a manifest
    whose ids differ.
    """
    keyed = {key: spec[key] for key in IMAGE_ID_KEYS}
    keyed.update({key: spec[key] for key in OPTIONAL_IMAGE_KEYS if spec.get(key)})
    canonical = json.dumps(keyed, sort_keys=True, separators=(",", ":"))
    return "img-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _image_entry(image: Image | None) -> dict[str, Any]:
    image = image or Image()
    spec: dict[str, Any] = {
        "python_version": image.python_version or current_python_version(),
        "python_packages": list(image.python_packages),
    }
    if image.requirements_files:
        spec["requirements_files"] = [{"name": name, "content": text} for name, text in image.requirements_files]
    if image.environment:
        spec["env"] = image.environment
    return {"id": image_id(spec), **spec}


def _options_entry(options: dict[str, Any]) -> dict[str, Any]:
    return {key: manifest_value(key, value) for key, value in options.items()}


def _doc(target: Any) -> str | None:
    if not ((inspect.isfunction(target) or isinstance(target, type)) and target.__doc__):
        return None
    return inspect.cleandoc(target.__doc__)


def _no_arguments() -> dict[str, Any]:
    """The ``parameters`` of a class: its instances are made with none (its methods have their own)."""
    return {"type": "object", "properties": {}, "required": [], "additionalProperties": False}


def _method_parameters(fn: Any) -> dict[str, Any]:
    """The ``parameters`` schema of a method, without ``self``."""
    schema = parameters_schema(fn)
    first = next(iter(inspect.signature(fn).parameters), None)
    if first is not None:
        schema["properties"].pop(first, None)
        schema["required"] = [name for name in schema["required"] if name != first]
    return schema


def _class_entry(workload: Workload) -> dict[str, Any]:
    """The ``class`` of an ``@app.cls`` workload: its methods with their signatures, its set-up and tear-down."""
    spec = workload.cls
    if spec is None:
        return {}
    cls = workload.target
    methods = [
        {
            "name": name,
            "doc": _doc(getattr(cls, name)),
            "parameters": _method_parameters(getattr(cls, name)),
            "returns": returns_schema(getattr(cls, name)),
        }
        for name in spec.methods
    ]
    enter = [{"name": name, "snap": snap} for name, snap in spec.enter]
    parameters = [
        {"name": p.name, "type": p.type, **({} if p.required else {"default": to_wire({"v": p.default})["v"]})}
        for p in spec.parameters
    ]
    block: dict[str, Any] = {"methods": methods, "enter": enter, "exit": spec.exit, "parameters": parameters}
    if workload.serves is not None:
        block["serves"] = workload.serves
    return {"class": block}


def _secret_refs(workload: Workload, inline: list[dict[str, str]]) -> dict[str, Any]:
    """``secrets`` of a workload entry, left out without any: names, and ``@<i>`` for entry ``i`` of
    ``inline``, the ``from_dict`` values, which go beside the manifest (see ``INLINE_SECRETS``)."""
    refs: list[str] = []
    for secret in workload.secrets:
        if secret.name is not None:
            refs.append(secret.name)
            continue
        values = dict(secret.local_values())
        if values not in inline:
            inline.append(values)
        refs.append(f"@{inline.index(values)}")
    return {"secrets": refs} if refs else {}


def _signature_entry(workload: Workload) -> dict[str, Any]:
    """``handler``, ``doc``, ``parameters`` and ``returns`` of a workload: its function's, a class's (which takes no
    arguments), or those of the class's method an endpoint serves."""
    if workload.kind == "asgi":
        return {"handler": None, "doc": _doc(workload.target), "parameters": None, "returns": None}
    if workload.serves is not None:
        method = getattr(workload.target, workload.serves)
        return {
            "handler": method.__qualname__,
            "doc": _doc(method),
            "parameters": _method_parameters(method),
            "returns": returns_schema(method),
        }
    if workload.cls is not None:
        return {
            "handler": workload.target.__qualname__,
            "doc": _doc(workload.target),
            "parameters": _no_arguments(),
            "returns": {},
        }
    target = workload.target
    return {
        "handler": target.__qualname__,
        "doc": _doc(target),
        "parameters": parameters_schema(target),
        "returns": returns_schema(target),
    }


def _volume_entries(workload: Workload) -> dict[str, Any]:
    """``volumes`` of a workload entry, left out without any."""
    mounts = [{"path": m.path, "volume": m.volume, "read_only": m.read_only} for m in workload.volumes]
    return {"volumes": mounts} if mounts else {}


def _workload_entry(workload: Workload, image: str, inline: list[dict[str, str]]) -> dict[str, Any]:
    signature = _signature_entry(workload)
    return {
        "name": workload.name,
        "kind": workload.kind,
        "handler": signature["handler"],
        "image": image,
        "doc": signature["doc"],
        "options": _options_entry(dict(workload.options)),
        "parameters": signature["parameters"],
        "returns": signature["returns"],
        **_secret_refs(workload, inline),
        **_volume_entries(workload),
        **_class_entry(workload),
    }


def build_manifest(app: App, entry: str) -> dict[str, Any]:
    """The Manifest v1 document of ``app``, whose module is ``entry`` (relative to the project root).

    Pure: the same app gives an equal document, with keys in a fixed order, ready
    for ``json.dumps(manifest, indent=2)``.
    """
    images: dict[str, dict[str, Any]] = {}
    workloads: list[dict[str, Any]] = []
    inline: list[dict[str, str]] = []
    for workload in app.workloads:
        image = _image_entry(workload.image)
        images[image["id"]] = image
        workloads.append(_workload_entry(workload, image["id"], inline))
    return {
        "manifest_version": MANIFEST_VERSION,
        "sdk_version": __version__,
        "entry": entry,
        "app": {"name": app.name},
        "images": [images[key] for key in sorted(images)],
        "workloads": workloads,
        # Taken out by whoever sends the manifest (the CLI, the client) and sent beside it: never in it.
        **({INLINE_SECRETS: inline} if inline else {}),
    }
