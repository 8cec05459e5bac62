"""gpu= on every decorator: its forms, the manifest's {"models", "count"}, and the errors for bad values."""

from __future__ import annotations

import pytest
import svc
from svc._gpu import canonical_model
from svc.manifest import build_manifest


def test_gpu_reaches_the_manifest_of_every_kind_in_one_shape(app):
    @app.function(gpu="A100-80GB:2")
    def f() -> None: ...

    @app.endpoint(gpu=["h100", "NVIDIA A100", "any"])
    def e() -> None: ...

    @app.realtime(gpu="any:2")
    def r(message: str) -> str:
        return message

    app.asgi(name="web", gpu="L4")(lambda scope, receive, send: None)

    @app.cls(gpu=["H100:4", "A100"])
    class Model:
        @svc.method()
        def predict(self) -> None: ...

        @svc.endpoint(route="/predict")
        def serve(self) -> None: ...

    options = {w["name"]: w["options"] for w in build_manifest(app, "app")["workloads"]}
    assert options["f"]["gpu"] == {"models": ["A100-80GB"], "count": 2}
    assert options["e"]["gpu"] == {"models": ["H100", "A100", "any"], "count": 1}
    assert options["r"]["gpu"] == {"models": ["any"], "count": 2}
    assert options["web"]["gpu"] == {"models": ["L4"], "count": 1}
    # A class's endpoint methods run in containers like the class's: they get its GPUs.
    assert options["model"]["gpu"] == options["model-serve"]["gpu"] == {"models": ["H100", "A100"], "count": 4}


def test_no_gpu_is_null_in_the_manifest(app):
    @app.function
    def f() -> None: ...

    assert build_manifest(app, "app")["workloads"][0]["options"]["gpu"] is None


@pytest.mark.parametrize(
    ("spelled", "canonical"),
    [
        ("H100", "H100"),
        ("h100", "H100"),
        ("NVIDIA H100 80GB HBM3", "H100-80GB"),
        ("a100 80gb", "A100-80GB"),
        ("A100-80G", "A100-80GB"),
        ("Tesla T4", "T4"),
        ("l40s", "L40S"),
        ("rtx4090", "RTX-4090"),
        ("GeForce RTX 4090", "RTX-4090"),
        ("Any", "any"),
        ("80GB", None),
    ],
)
def test_model_names_take_one_form(spelled, canonical):
    assert canonical_model(spelled) == canonical


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("H100:0", r"gpu='H100:0' asks for 0 GPUs: a container takes 1 to 8"),
        ("H100:9", r"asks for 9 GPUs: a container takes 1 to 8"),
        (":2", r"gpu=':2' names no GPU model: write the model first"),
        ("H100:x", r"has a count that is not a whole number: write it after ':', such as 'H100:2'"),
        ("H100!", r"is not a GPU model: write letters, digits, spaces and '-'"),
        ("", r"names no GPU model"),
        ("80GB", r"names no GPU model \(a size alone\?\)"),
        ([], r"gpu=\[\] is an empty list: list at least one GPU model"),
        (5, r"gpu=5 is a int: pass a GPU model"),
        (True, r"gpu=True is a bool"),
        (["H100", 5], r"has 5, which is a int, not a string"),
        (
            ["H100:1", "A100:2"],
            r"asks for 1 and 2 GPUs in one list: every model of a fallback list gets the same count",
        ),
        (["any", "H100"], r"lists H100 after 'any', which takes every GPU: put 'any' last"),
        (["H100", "h100"], r"lists H100 twice"),
        ([f"M{i}" for i in range(9)], r"lists 9 models; a fallback list takes at most 8"),
    ],
)
def test_bad_gpu_values_are_refused_at_the_decorator_saying_how_to_fix_them(app, value, message):
    with pytest.raises(svc.InvalidOptionError, match=message) as caught:
        app.function(gpu=value)
    assert caught.value.option == "gpu"
    assert app.workloads == ()


def test_an_endpoint_method_takes_its_gpu_from_the_class(app):
    with pytest.raises(svc.InvalidOptionError, match=r"the class gives cpu, memory, gpu, image and secrets"):

        @app.cls
        class Model:
            @svc.endpoint(gpu="H100")
            def serve(self) -> None: ...
