"""build_manifest(): the pure Manifest v1 builder."""

from __future__ import annotations

import hashlib
import json
import sys

import svc
from svc.manifest import build_manifest, image_id

CURRENT = f"{sys.version_info.major}.{sys.version_info.minor}"


async def web(scope, receive, send): ...


def test_document_shape_and_key_order(app):
    manifest = build_manifest(app, "app")
    assert list(manifest) == ["manifest_version", "sdk_version", "entry", "app", "images", "workloads"]
    assert manifest == {
        "manifest_version": 1,
        "sdk_version": svc.__version__,
        "entry": "app",
        "app": {"name": "test"},
        "images": [],
        "workloads": [],
    }


def test_image_id_is_the_sha256_of_the_canonical_spec():
    spec = {"python_version": "3.11", "python_packages": ["numpy"]}
    canonical = '{"python_packages":["numpy"],"python_version":"3.11"}'
    assert image_id(spec) == "img-" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


def test_images_are_distinct_sorted_by_id_and_default_to_the_writers_python(app):
    numpy = svc.Image(python_version="3.12").add_python_packages(["numpy"])

    @app.function
    def a(): ...

    @app.function(image=numpy)
    def b(): ...

    @app.function(image=svc.Image(python_version="3.12").add_python_packages(["numpy"]))
    def c(): ...

    @app.function(image=svc.Image())
    def d(): ...

    manifest = build_manifest(app, "app")
    images = manifest["images"]
    assert [image["id"] for image in images] == sorted(image["id"] for image in images)
    assert len(images) == 2
    by_version = {image["python_version"]: image for image in images}
    assert by_version[CURRENT]["python_packages"] == []
    assert by_version["3.12"]["python_packages"] == ["numpy"]
    assert list(images[0]) == ["id", "python_version", "python_packages"]
    ids = [w["image"] for w in manifest["workloads"]]
    assert ids[0] == ids[3] == by_version[CURRENT]["id"] and ids[1] == ids[2] == by_version["3.12"]["id"]


def test_workload_entries(app):
    @app.endpoint(route="/greet", methods=["post"], cpu=2, autoscaler=svc.Autoscaler(max_containers=3))
    def greet(name: str, context: svc.Context | None = None) -> str:
        """Greets.

        Args:
            name: who to greet.
        """
        return name

    app.asgi(name="site", concurrent_requests=4)(web)
    endpoint, asgi = build_manifest(app, "pkg.app")["workloads"]
    assert list(endpoint) == ["name", "kind", "handler", "image", "doc", "options", "parameters", "returns"]
    assert endpoint["name"] == "greet" and endpoint["kind"] == "endpoint"
    assert endpoint["handler"] == "test_workload_entries.<locals>.greet"
    assert endpoint["doc"] == "Greets.\n\nArgs:\n    name: who to greet."
    assert endpoint["options"]["cpu"] == 2.0 and endpoint["options"]["methods"] == ["POST"]
    assert endpoint["options"]["autoscaler"] == {"max_containers": 3, "tasks_per_container": 1, "min_containers": 0}
    assert endpoint["parameters"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    }
    assert endpoint["returns"] == {"type": "string"}
    assert asgi["handler"] is None and asgi["parameters"] is None and asgi["returns"] is None
    assert asgi["doc"] is None
    assert asgi["options"]["concurrent_requests"] == 4


def test_the_same_app_gives_the_same_bytes(app):
    @app.endpoint
    def f(x: int = 1) -> dict[str, int]:
        return {"x": x}

    first = json.dumps(build_manifest(app, "app"), indent=2)
    assert first == json.dumps(build_manifest(app, "app"), indent=2)
