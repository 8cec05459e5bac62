"""buffer_containers= on every kind, and scaledown_window=, the keep-warm option's other name."""

from __future__ import annotations

import pytest
import svc
from svc.manifest import build_manifest


def test_buffer_containers_and_scaledown_window_reach_the_manifest_under_its_names(app):
    @app.function(buffer_containers=2, scaledown_window=300)
    def f() -> None: ...

    @app.endpoint(buffer_containers=1, scaledown_window=0)
    def e() -> None: ...

    @app.realtime(scaledown_window=30)
    def r(message: str) -> str:
        return message

    @app.cls(buffer_containers=1, scaledown_window=120)
    class Model:
        @svc.method()
        def predict(self) -> None: ...

    options = {w["name"]: w["options"] for w in build_manifest(app, "app")["workloads"]}
    assert (options["f"]["buffer_containers"], options["f"]["keep_warm_seconds"]) == (2, 300)
    assert (options["e"]["buffer_containers"], options["e"]["keep_warm"]) == (1, 0)
    assert (options["r"]["buffer_containers"], options["r"]["keep_warm_seconds"]) == (0, 30)
    assert (options["model"]["buffer_containers"], options["model"]["keep_warm_seconds"]) == (1, 120)
    assert all("scaledown_window" not in o for o in options.values())


def test_scaledown_window_and_keep_warm_together_are_refused_naming_both(app):
    with pytest.raises(
        svc.InvalidOptionError,
        match=r"^@app.endpoint: scaledown_window=30 is keep_warm under another name, and keep_warm=10 is given too",
    ):
        app.endpoint(keep_warm=10, scaledown_window=30)
    with pytest.raises(svc.InvalidOptionError, match=r"^app.asgi: scaledown_window=-1 is out of range"):
        app.asgi(name="web", scaledown_window=-1)
    with pytest.raises(svc.InvalidOptionError, match=r"buffer_containers=1001 is out of range"):
        app.function(buffer_containers=1001)
