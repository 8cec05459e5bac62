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


def test_an_image_with_requirements_files_and_env_carries_them_and_they_make_its_id(app, tmp_path):
    (tmp_path / "requirements.txt").write_text("six==1.16.0\n")
    image = (
        svc.Image(python_version="3.12")
        .add_python_packages(["numpy"])
        .pip_install_from_requirements(tmp_path / "requirements.txt")
        .env({"B": "2", "A": "caf\u00e9"})
    )

    @app.function(image=image)
    def a(): ...

    (entry,) = build_manifest(app, "app")["images"]
    assert list(entry) == ["id", "python_version", "python_packages", "requirements_files", "env"]
    assert entry["requirements_files"] == [{"name": "requirements.txt", "content": "six==1.16.0\n"}]
    assert entry["env"] == {"A": "caf\u00e9", "B": "2"}
    canonical = (
        '{"env":{"A":"caf\\u00e9","B":"2"},"python_packages":["numpy"],"python_version":"3.12",'
        '"requirements_files":[{"content":"six==1.16.0\\n","name":"requirements.txt"}]}'
    )
    assert entry["id"] == "img-" + hashlib.sha256(canonical.encode()).hexdigest()[:16]
    plain = image_id({"python_version": "3.12", "python_packages": ["numpy"]})
    assert entry["id"] != plain


def test_an_image_without_the_new_fields_keeps_its_id_and_keys(app):
    @app.function(image=svc.Image(python_version="3.12").add_python_packages(["numpy"]).env({}))
    def a(): ...

    (entry,) = build_manifest(app, "app")["images"]
    assert list(entry) == ["id", "python_version", "python_packages"]
    canonical = '{"python_packages":["numpy"],"python_version":"3.12"}'
    assert entry["id"] == "img-" + hashlib.sha256(canonical.encode()).hexdigest()[:16]
    assert image_id({**entry, "requirements_files": [], "env": {}}) == entry["id"], (
        "empty fields are left out of the id"
    )


def test_images_differing_only_in_env_are_two_images(app):
    base = svc.Image(python_version="3.12")

    @app.function(image=base.env({"MODE": "a"}))
    def a(): ...

    @app.function(image=base.env({"MODE": "b"}))
    def b(): ...

    images = build_manifest(app, "app")["images"]
    assert sorted(image["env"]["MODE"] for image in images) == ["a", "b"]
    assert len({image["id"] for image in images}) == 2
