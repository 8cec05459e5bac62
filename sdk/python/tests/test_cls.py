"""``@app.cls`` classes without a server: the marks and the mistakes they refuse, the manifest's ``class``
block, ``.local`` calls, and the runtime serving a class (a method per call on one instance per worker,
``enter`` before the first call, ``exit`` at shutdown)."""

from __future__ import annotations

import asyncio
import base64
import os
import pickle

import pytest
import svc
from helpers import http_call
from runtime_helpers import ndjson, run
from svc._loading import EntryError, find_app, import_entry
from svc.manifest._build import build_manifest
from svc.runtime import create_app, run_on_start
from svc.runtime._lifecycle import run_worker_enter

CALL = [("Content-Type", "application/vnd.svc.call+pickle")]


def declare(app: svc.App, **options):
    @app.cls(**options)
    class Model:
        """Counts its calls on weights loaded once."""

        @svc.enter(snap=True)
        def boot(self) -> None:
            self.order = ["boot"]

        @svc.enter()
        def load(self) -> None:
            self.order.append("load")
            self.weights = {"a": 1, "b": 2}
            self.calls = 0

        @svc.method()
        def score(self, text: str, scale: int = 1) -> int:
            """Sum of the letters' weights."""
            self.calls += 1
            return scale * sum(self.weights.get(c, 0) for c in text)

        @svc.method
        def seen(self) -> dict:
            return {"calls": self.calls, "order": self.order}

        @svc.exit()
        def close(self) -> None:
            self.order.append("close")
            print("closing")

    return Model


# Declaring


def test_cls_registers_a_function_workload_with_its_marked_methods(app):
    model = declare(app, memory="256Mi")
    (workload,) = app.workloads
    assert (workload.name, workload.kind, workload.options["memory"]) == ("model", "function", "256Mi")
    assert workload.cls is not None
    assert workload.cls.methods == ("score", "seen")
    assert workload.cls.enter == (("boot", True), ("load", False))
    assert workload.cls.exit == "close"
    assert repr(model) == "<svc class 'model', methods score, seen>"


def test_snap_enter_methods_run_first_whatever_their_place_in_the_class(app):
    @app.cls()
    class Late:
        @svc.enter()
        def first_defined(self) -> None: ...

        @svc.enter(snap=True)
        def snapped(self) -> None: ...

        @svc.method()
        def go(self) -> None: ...

    assert app.workloads[0].cls.enter == (("snapped", True), ("first_defined", False))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"on_start": print},
            "@app.cls: on_start=<built-in function print> is not an option of @app.cls (its @svc.enter() methods are its set-up)",
        ),
        (
            {"schedule": svc.Period(60)},
            "is not an option of @app.cls: it takes name, image, secrets, volumes, cpu, memory",
        ),
        ({"memry": "1Gi"}, "did you mean memory=?"),
        ({"cpu": 0}, "@app.cls: cpu=0 is out of range"),
        ({"name": "Not A Label"}, "@app.cls: name='Not A Label'"),
    ],
)
def test_cls_refuses_options_it_does_not_take_naming_itself(app, options, message):
    with pytest.raises(svc.InvalidOptionError, match=None) as caught:
        declare(app, **options)
    assert message in str(caught.value)
    assert app.workloads == ()


def test_enter_and_exit_take_only_self():
    with pytest.raises(
        svc.InvalidOptionError, match=r"@svc.enter\(\): .*load must take only self \(it takes self, path\)"
    ):

        class Model:
            @svc.enter()
            def load(self, path: str) -> None: ...

    with pytest.raises(
        svc.InvalidOptionError, match=r"@svc.exit\(\): .*close must take only self \(it takes nothing\)"
    ):

        class Other:
            @svc.exit
            def close() -> None: ...


def test_a_class_has_at_most_one_exit_and_at_least_one_method(app):
    with pytest.raises(
        svc.InvalidOptionError, match=r"marks 2 methods @svc.exit\(\) \(a, b\); a class has at most one"
    ):

        @app.cls()
        class TwoExits:
            @svc.exit()
            def a(self) -> None: ...

            @svc.exit()
            def b(self) -> None: ...

            @svc.method()
            def go(self) -> None: ...

    with pytest.raises(svc.InvalidOptionError, match=r"has no @svc.method\(\) method, so nothing could call it"):

        @app.cls()
        class Idle:
            @svc.enter()
            def load(self) -> None: ...

    assert app.workloads == ()


def test_a_method_has_one_role_and_init_takes_no_arguments(app):
    with pytest.raises(svc.InvalidOptionError, match=r"already marked @svc.method\(\); a method has one role"):

        class Both:
            @svc.enter()
            @svc.method()
            def both(self) -> None: ...

    with pytest.raises(
        svc.InvalidOptionError, match=r"__init__ takes arguments.*load what it needs in an @svc.enter\(\) method"
    ):

        @app.cls()
        class Configured:
            def __init__(self, size: str) -> None: ...

            @svc.method()
            def go(self) -> None: ...


def test_a_marked_method_s_name_may_not_start_with_an_underscore(app):
    with pytest.raises(
        svc.InvalidOptionError,
        match=r"Hidden._go is marked @svc.method\(\), but svc calls no method whose name starts with '_'",
    ):

        @app.cls()
        class Hidden:
            @svc.method()
            def _go(self) -> None: ...


def test_function_decorators_refuse_classes_and_marked_functions(app):
    with pytest.raises(
        svc.InvalidOptionError,
        match=r"@app.function decorates a function, not the class .*Model: declare a class with @app.cls",
    ):

        @app.function
        class Model: ...

    with pytest.raises(
        svc.InvalidOptionError,
        match=r"@app.endpoint decorates a function, not the class .*Served: .*@svc.endpoint\(\) \(served over HTTP\)",
    ):

        @app.endpoint(route="/x")
        class Served: ...

    with pytest.raises(
        svc.InvalidOptionError, match=r"is marked @svc.method\(\), which marks a method of an @app.cls class"
    ):

        @app.function
        @svc.method()
        def loose(x: int) -> int:
            return x

    with pytest.raises(svc.InvalidOptionError, match=r"@app.cls decorates a class .* not a function"):
        app.cls()(lambda: None)


def test_marks_where_nothing_runs_them_fail_loading_the_app_naming_the_place(tmp_path, write_module):
    path = write_module(
        """
        import svc
        app = svc.App("stray")

        @svc.method()
        def predict(x):
            return x
        """,
        name="stray_function",
    )
    with pytest.raises(
        EntryError, match=r"@svc.method\(\) marks predict\(\) \(.*stray_function.py:5\), which is not inside a class"
    ):
        find_app(import_entry(str(path.parent), "stray_function"))

    write_module(
        """
        import svc
        app = svc.App("stray")

        class Model:
            @svc.method()
            def predict(self, x):
                return x
        """,
        name="stray_class",
    )
    with pytest.raises(
        EntryError, match=r"class Model \(.*stray_class.py:5\) marks predict .* not declared with @app.cls"
    ):
        find_app(import_entry(str(tmp_path), "stray_class"))


# The manifest


def test_the_manifest_writes_a_class_as_a_function_with_its_class_block(app):
    declare(app)
    (entry,) = build_manifest(app, "app")["workloads"]
    assert (entry["kind"], entry["handler"], entry["doc"]) == (
        "function",
        "declare.<locals>.Model",
        "Counts its calls on weights loaded once.",
    )
    assert entry["parameters"] == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    assert entry["returns"] == {}
    assert entry["options"]["on_start"] is None and entry["options"]["schedule"] is None
    assert entry["class"] == {
        "methods": [
            {
                "name": "score",
                "doc": "Sum of the letters' weights.",
                "parameters": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}, "scale": {"type": "integer", "default": 1}},
                    "required": ["text"],
                    "additionalProperties": False,
                },
                "returns": {"type": "integer"},
            },
            {
                "name": "seen",
                "doc": None,
                "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
                "returns": {"type": "object"},
            },
        ],
        "enter": [{"name": "boot", "snap": True}, {"name": "load", "snap": False}],
        "exit": "close",
        "parameters": [],
    }


# Calling in this process


def test_local_calls_run_on_one_instance_per_handle_whose_enter_methods_ran_once(app):
    model = declare(app)
    instance = model()
    assert instance.score.local("ab") == 3
    assert instance.score("b", scale=2) == 4  # calling the handle is .local()
    assert instance.seen.local() == {"calls": 2, "order": ["boot", "load"]}
    assert model().seen.local() == {"calls": 0, "order": ["boot", "load"]}  # another handle, another instance


def test_local_calls_see_the_from_dict_secrets(app):
    @app.cls(secrets=[svc.Secret.from_dict({"CLS_TEST_KEY": "k1"})])
    class Keyed:
        @svc.enter()
        def load(self) -> None:
            self.key_at_enter = os.environ.get("CLS_TEST_KEY")

        @svc.method()
        def key(self) -> tuple:
            return self.key_at_enter, os.environ.get("CLS_TEST_KEY")

    assert Keyed().key.local() == ("k1", "k1")
    assert "CLS_TEST_KEY" not in os.environ


def test_the_handles_refuse_arguments_and_unknown_methods(app):
    model = declare(app)
    with pytest.raises(TypeError, match=r"Model\(\) has no parameter 'size' \(it takes no parameters\)"):
        model(size="large")
    with pytest.raises(TypeError, match=r"Model\(\) takes its parameters by name \(none\), not by position"):
        model("large")
    with pytest.raises(
        AttributeError, match=r"has no @svc.method\(\) method 'scor' \(did you mean score\? its methods: score, seen\)"
    ):
        _ = model().scor


def test_cls_from_name_checks_its_arguments_and_names_methods_lazily():
    deployed = svc.Cls.from_name("shop", "Model")
    assert repr(deployed) == "<svc.Cls shop/model (deployed)>"
    assert repr(deployed().predict) == "<svc method shop.model.predict (deployed)>"
    with pytest.raises(TypeError, match="app must be a non-empty string"):
        svc.Cls.from_name("", "Model")


# The runtime


def serve_class(app):
    model = declare(app)
    workload = model.workload
    instance = run_on_start(workload)  # made, snap=True enter methods run: what a checkpoint would hold
    assert instance.order == ["boot"]
    run_worker_enter(workload, instance)  # in the worker, after any fork
    return create_app(workload, on_start_value=instance), instance


def call(handler, method, *args, **kwargs):
    body = pickle.dumps({"args": list(args), "kwargs": kwargs, **({"method": method} if method else {})})
    reply = run(http_call(handler, "POST", "/", body=body, headers=CALL))
    return reply, ndjson(reply.body) if reply.status == 200 else None


def result(frames):
    assert frames[-1]["type"] == "result", frames
    return pickle.loads(base64.b64decode(frames[-1]["pickle"]))


def test_the_runtime_calls_the_named_method_on_the_worker_s_one_instance(app):
    handler, instance = serve_class(app)
    assert result(call(handler, "score", "aab", scale=2)[1]) == 8
    assert result(call(handler, "score", "b")[1]) == 2
    assert result(call(handler, "seen")[1]) == {"calls": 2, "order": ["boot", "load"]}
    assert instance.calls == 2


@pytest.mark.parametrize(
    ("method", "message"),
    [
        (None, "model is a class: a call of it names one of its methods (score, seen)"),
        ("load", "model is a class: it has no @svc.method() method 'load' (score, seen)"),
        ("nope", "model is a class: it has no @svc.method() method 'nope' (score, seen)"),
    ],
)
def test_a_call_that_names_no_method_of_the_class_is_400(app, method, message):
    handler, _ = serve_class(app)
    reply, _ = call(handler, method)
    assert reply.status == 400
    assert reply.json()["error"] == {"code": "bad_request", "message": message}


def test_a_function_refuses_a_call_that_names_a_method(app):
    @app.function
    def plain() -> int:
        return 1

    handler = create_app(plain.workload, on_start_value=run_on_start(plain.workload))
    reply, _ = call(handler, "score")
    assert reply.status == 400
    assert "plain is a function, not a class: a call of it names no method" in reply.json()["error"]["message"]
    reply, frames = call(handler, None)
    assert reply.status == 200 and result(frames) == 1


def test_a_json_call_of_a_class_is_400_naming_its_methods(app):
    handler, _ = serve_class(app)
    reply = run(http_call(handler, "POST", "/", body=b"{}", headers=[("Content-Type", "application/json")]))
    assert reply.status == 400 and "a call of it names one of its methods" in reply.json()["error"]["message"]


def test_the_exit_method_runs_at_the_worker_s_lifespan_shutdown(app, capfd):
    handler, instance = serve_class(app)

    async def lifespan() -> list[str]:
        inbox: asyncio.Queue = asyncio.Queue()
        sent: list[str] = []
        for message in ("lifespan.startup", "lifespan.shutdown"):
            inbox.put_nowait({"type": message})

        async def send(message):
            sent.append(message["type"])

        await handler({"type": "lifespan"}, inbox.get, send)
        return sent

    assert run(lifespan()) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert instance.order == ["boot", "load", "close"]
    assert "closing" in capfd.readouterr().out


# Parameters


def declare_sized(app: svc.App):
    @app.cls()
    class Sized:
        size: str = svc.parameter(default="small")
        layers: int = svc.parameter(default=2)
        fast: bool = svc.parameter(default=False)
        seed: bytes = svc.parameter(default=b"\x00\xff")
        name: str = svc.parameter()

        @svc.enter()
        def load(self) -> None:
            self.seen_at_enter = (self.size, self.layers, self.fast, self.seed, self.name)

        @svc.method()
        def describe(self) -> tuple:
            return self.seen_at_enter

    return Sized


def test_parameters_are_read_with_their_types_and_written_to_the_manifest(app):
    declare_sized(app)
    (workload,) = app.workloads
    assert [(p.name, p.type, p.required) for p in workload.cls.parameters] == [
        ("size", "str", False),
        ("layers", "int", False),
        ("fast", "bool", False),
        ("seed", "bytes", False),
        ("name", "str", True),
    ]
    assert build_manifest(app, "app")["workloads"][0]["class"]["parameters"] == [
        {"name": "size", "type": "str", "default": "small"},
        {"name": "layers", "type": "int", "default": 2},
        {"name": "fast", "type": "bool", "default": False},
        {"name": "seed", "type": "bytes", "default": {"base64": "AP8="}},
        {"name": "name", "type": "str"},
    ]


def test_an_instance_binds_its_parameters_at_the_call_line(app):
    sized = declare_sized(app)
    assert sized(name="a", size="large").describe.local() == ("large", 2, False, b"\x00\xff", "a")
    for given, message in [
        ({}, r"Sized\(\) needs its parameter 'name' \(a str\)"),
        ({"name": "a", "layers": True}, r"the parameter 'layers' must be int, not bool True"),
        ({"name": "a", "layers": 2.0}, r"the parameter 'layers' must be int, not float 2.0"),
        ({"name": "a", "seed": "00"}, r"the parameter 'seed' must be bytes, not str '00'"),
        ({"name": "a", "sise": "x"}, r"has no parameter 'sise' \(it takes size, layers, fast, seed, name\)"),
    ]:
        with pytest.raises(TypeError, match=message):
            sized(**given)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "size = svc.parameter()",
            r"Odd.size is a svc.parameter\(\) with no annotation; annotate it str, int, bool or bytes",
        ),
        ("size: float = svc.parameter(default=1.0)", r"Odd.size is a svc.parameter\(\) with the type 'float'"),
        ("size: int = svc.parameter(default='1')", r"Odd.size's default must be int, not str '1'"),
    ],
)
def test_a_parameter_of_another_type_or_default_is_refused_at_the_class(app, write_module, body, message):
    path = write_module(
        f"""
        import svc
        app = svc.App("odd")

        @app.cls()
        class Odd:
            {body}

            @svc.method()
            def go(self) -> None: ...
        """,
        name="odd_parameters",
    )
    with pytest.raises(svc.InvalidOptionError, match=message):
        import_entry(str(path.parent), "odd_parameters")


def test_a_container_s_instance_gets_the_values_the_platform_sets(app, monkeypatch):
    sized = declare_sized(app)
    workload = sized.workload
    monkeypatch.setenv("SVC_CLASS_PARAMETERS", '{"name": "run", "layers": 5, "seed": {"base64": "AQI="}}')
    instance = run_on_start(workload)
    run_worker_enter(workload, instance)
    assert instance.seen_at_enter == ("small", 5, False, b"\x01\x02", "run")
    monkeypatch.delenv("SVC_CLASS_PARAMETERS")
    with pytest.raises(TypeError, match=r"needs its parameter 'name'"):
        run_on_start(workload)


# Methods served over HTTP


def declare_served(app: svc.App, **endpoint_options):
    @app.cls(cpu=0.5, memory="256Mi")
    class Model:
        size: str = svc.parameter(default="small")

        @svc.enter()
        def load(self) -> None:
            self.loads = getattr(self, "loads", 0) + 1

        @svc.method()
        def ping(self) -> str:
            return "pong"

        @svc.endpoint(route="/predict", methods=["POST"], authorized=False, **endpoint_options)
        def predict_http(self, text: str, excited: bool = False) -> dict:
            """Scores over HTTP."""
            return {"length": len(text), "excited": excited, "size": self.size, "loads": self.loads}

        @svc.exit()
        def close(self) -> None:
            print("closing the served instance")

    return Model


def test_an_endpoint_method_is_an_endpoint_workload_of_its_own_with_the_class_s_resources(app):
    declare_served(app, concurrency=4)
    model, served = app.workloads
    assert (served.name, served.kind, served.serves, served.cls) == (
        "model-predict-http",
        "endpoint",
        "predict_http",
        model.cls,
    )
    assert served.target is model.target and served.secrets == model.secrets
    options = dict(served.options)
    assert (options["route"], options["methods"], options["authorized"], options["concurrency"]) == (
        "/predict",
        ["POST"],
        False,
        4,
    )
    assert (options["cpu"], options["memory"], options["on_start"], options["checkpoint_enabled"]) == (
        0.5,
        "256Mi",
        None,
        False,
    )
    entry = build_manifest(app, "app")["workloads"][1]
    assert (entry["kind"], entry["handler"], entry["doc"]) == (
        "endpoint",
        "declare_served.<locals>.Model.predict_http",
        "Scores over HTTP.",
    )
    assert entry["parameters"]["properties"] == {
        "text": {"type": "string"},
        "excited": {"type": "boolean", "default": False},
    }
    assert entry["class"]["serves"] == "predict_http" and [m["name"] for m in entry["class"]["methods"]] == ["ping"]
    assert "serves" not in build_manifest(app, "app")["workloads"][0]["class"]


def test_an_endpoint_method_takes_endpoint_options_but_those_the_class_gives(app):
    with pytest.raises(
        svc.InvalidOptionError,
        match=r"@svc.endpoint: memory='1Gi' is not an option of @svc.endpoint: .*the class gives cpu, memory",
    ):
        declare_served(app, memory="1Gi")
    with pytest.raises(svc.InvalidOptionError, match=r"@svc.endpoint: concurrency=0 is out of range"):
        declare_served(app, concurrency=0)
    with pytest.raises(
        svc.InvalidOptionError,
        match=r"Required serves go over HTTP, whose containers make their instance with the parameters' defaults, but size has none: give it a default",
    ):

        @app.cls()
        class Required:
            size: str = svc.parameter()

            @svc.endpoint(route="/go")
            def go(self) -> None: ...

    assert app.workloads == ()


def test_the_runtime_serves_the_method_on_the_worker_s_instance_and_runs_exit_at_shutdown(app, capfd):
    declare_served(app)
    served = app.workloads[1]
    instance = run_on_start(served)
    run_worker_enter(served, instance)
    handler = create_app(served, on_start_value=instance)
    body = b'{"text": "hello", "excited": true}'
    reply = run(http_call(handler, "POST", "/", body=body, headers=[("Content-Type", "application/json")]))
    assert reply.status == 200, reply.body
    assert reply.json() == {"length": 5, "excited": True, "size": "small", "loads": 1}

    async def shutdown() -> None:
        inbox: asyncio.Queue = asyncio.Queue()
        for message in ("lifespan.startup", "lifespan.shutdown"):
            inbox.put_nowait({"type": message})

        async def send(message):
            pass

        await handler({"type": "lifespan"}, inbox.get, send)

    run(shutdown())
    assert "closing the served instance" in capfd.readouterr().out
