"""volumes= on every decorator: checked at the decorator line, written to the manifest as path, volume, read-only."""

from __future__ import annotations

import os

import pytest
import svc
from svc.manifest import build_manifest


def test_every_kind_and_classes_take_volumes_and_the_manifest_lists_them(app):
    models = svc.Volume.from_name("models")

    @app.function(volumes={"/models": models})
    def f() -> None: ...

    @app.endpoint(volumes={"/data": models.read_only()})
    def e() -> None: ...

    @app.realtime(volumes={"/srv/cache": models})
    def r(message: str) -> str:
        return message

    async def asgi(scope, receive, send) -> None: ...

    app.asgi(name="web", volumes={"/data": models})(asgi)

    @app.cls(volumes={"/weights": models.read_only()})
    class Model:
        @svc.method()
        def predict(self, x: int) -> int:
            return x

        @svc.endpoint()
        def score(self, x: int) -> int:
            return x

    volumes = {w["name"]: w.get("volumes") for w in build_manifest(app, "app")["workloads"]}
    assert volumes == {
        "f": [{"path": "/models", "volume": "models", "read_only": False}],
        "e": [{"path": "/data", "volume": "models", "read_only": True}],
        "r": [{"path": "/srv/cache", "volume": "models", "read_only": False}],
        "web": [{"path": "/data", "volume": "models", "read_only": False}],
        "model": [{"path": "/weights", "volume": "models", "read_only": True}],
        "model-score": [{"path": "/weights", "volume": "models", "read_only": True}],
    }


def test_without_volumes_the_manifest_has_no_key(app):
    @app.function
    def f() -> None: ...

    assert "volumes" not in build_manifest(app, "app")["workloads"][0]


def test_read_only_is_a_copy_and_shows_in_repr():
    vol = svc.Volume.from_name("models")
    ro = vol.read_only()
    assert (vol.is_read_only, ro.is_read_only, ro.name) == (False, True, "models")
    assert repr(ro) == "svc.Volume('models').read_only()"


@pytest.mark.parametrize(
    ("volumes", "message"),
    [
        (svc.Volume.from_name("m"), r"volumes= maps paths to volumes: write \{'/data': svc.Volume\('m'\)\}"),
        (["/data"], "volumes= is a list, not a dict"),
        ({"/data": "m"}, r"volumes\['/data'\] is a str, not a svc.Volume"),
        ({3: svc.Volume.from_name("m")}, "volumes= has the key 3; keys are absolute paths"),
        ({"data": svc.Volume.from_name("m")}, "the mount path 'data' is not absolute"),
        ({"/": svc.Volume.from_name("m")}, 'is "/": a volume cannot replace the whole file system'),
        ({"/etc/app": svc.Volume.from_name("m")}, "is in /etc, which the system needs"),
        ({"/var": svc.Volume.from_name("m")}, "is /var itself"),
        ({"/data/": svc.Volume.from_name("m")}, "is not a plain absolute path"),
        (
            {"/data": svc.Volume.from_name("m"), "/data/sub": svc.Volume.from_name("n")},
            "the mount path '/data/sub' overlaps '/data': give each volume its own folder",
        ),
        ({f"/v{i}": svc.Volume.from_name("m") for i in range(17)}, "mounts 17 volumes; a workload mounts at most 16"),
    ],
)
def test_bad_volumes_fail_at_the_decorator_line_naming_it(app, volumes, message):
    with pytest.raises(svc.InvalidOptionError, match=message) as caught:

        @app.function(volumes=volumes)
        def f() -> None: ...

    assert str(caught.value).startswith("@app.function: ")
    assert caught.value.option == "volumes"
    assert app.workloads == ()


def test_a_mount_over_the_apps_own_folder_is_refused(app):
    here = os.path.dirname(os.path.abspath(__file__))
    with pytest.raises(svc.InvalidOptionError, match="overlaps .*, the folder of the app's code"):

        @app.endpoint(volumes={here: svc.Volume.from_name("m")})
        def e() -> None: ...


def test_a_bad_mount_on_a_class_names_app_cls(app):
    with pytest.raises(svc.InvalidOptionError, match=r"^@app.cls: volumes= the mount path '/proc/x' is in /proc"):

        @app.cls(volumes={"/proc/x": svc.Volume.from_name("m")})
        class Model:
            @svc.method()
            def predict(self) -> None: ...
