"""Decorator options: checked at decoration time, defaults filled in, errors that say how to fix them."""

from __future__ import annotations

import inspect
import math
import re

import pytest
import svc


async def asgi_app(scope, receive, send):  # a minimal ASGI application
    pass


def declare(app: svc.App, kind: str, **options):
    """Declares one workload of ``kind`` with ``options``; returns its checked options."""
    if kind == "asgi":
        return app.asgi(name="web", **options)(asgi_app).workload.options

    def handler(message: str = "") -> str:
        return message

    return getattr(app, kind)(**options)(handler).workload.options


# option -> (kind that takes it, good values with what they become, bad values)
CASES = {
    "cpu": (
        "function",
        [(0.125, 0.125), (0.5, 0.5), (1, 1.0), (64, 64.0)],
        [True, False, "1", "500m", None, 0.1, 0, -1, 64.5, math.inf, math.nan],
    ),
    "memory": (
        "function",
        [("64Mi", "64Mi"), ("512Mi", "512Mi"), ("1Gi", "1Gi"), ("256Gi", "256Gi")],
        [512, None, 1.5, "512MB", "512M", "1G", "512mi", "0.5Gi", "Mi", "512 Mi", "0512Mi", "63Mi", "257Gi", "1Ti"],
    ),
    "route": (
        "endpoint",
        [("/", "/"), ("/greet", "/greet"), ("/a/b-c/_d", "/a/b-c/_d"), ("/api/", "/api/")],
        [
            "greet",
            "",
            "/a b",
            "/a\tb",
            "/a?b=1",
            "/a#b",
            "//a",
            "/a//b",
            "/./a",
            "/a/..",
            "/_svc",
            "/_svc/health",
            5,
            None,
        ],
    ),
    "methods": (
        "endpoint",
        [
            (["GET"], ["GET"]),
            (["post", "Get"], ["POST", "GET"]),
            (("PUT",), ["PUT"]),
            (
                ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
                ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
            ),
        ],
        ["GET", [], ["FETCH"], ["GET", "get"], [1], {"GET"}, None],
    ),
    "workers": ("endpoint", [(1, 1), (64, 64)], [0, 65, 1.0, True, "2", None]),
    "concurrency": ("endpoint", [(1, 1), (1000, 1000)], [0, 1001, 2.5, False, "8"]),
    "concurrent_requests": ("asgi", [(1, 1), (1000, 1000)], [0, 1001, 2.5, True, "8"]),
    "max_pending_tasks": ("endpoint", [(0, 0), (100000, 100000)], [-1, 100001, 1.5, True, None]),
    "checkpoint_enabled": ("realtime", [(True, True), (False, False)], [0, 1, "yes", None]),
    "authorized": ("endpoint", [(True, True), (False, False)], [0, 1, "false", None]),
    "domain": (
        "asgi",
        [(None, None), ("api.example.com", "api.example.com"), ("a-b.c9.example.io", "a-b.c9.example.io")],
        [
            "localhost",
            "API.example.com",
            "https://api.example.com",
            "api.example.com/x",
            "-a.example.com",
            "a-.example.com",
            "a..com",
            "api.example.com.",
            "api.example.com:8080",
            "x" * 64 + ".com",
            5,
            "",
        ],
    ),
    "keep_warm": ("endpoint", [(0, 0), (86400, 86400)], [-1, 86401, 60.0, True, "60"]),
    "keep_warm_seconds": ("realtime", [(0, 0), (86400, 86400)], [-1, 86401, 60.0, False]),
    "timeout": (
        "endpoint",
        [(1, 1.0), (2.5, 2.5), (86400, 86400.0)],
        [0, 0.5, -1, 86401, True, "30", None, math.inf, math.nan],
    ),
    "retries": (
        "function",
        [
            (None, None),
            (0, svc.Retries(0)),
            (3, svc.Retries(3)),
            (10, svc.Retries(10)),
            (svc.Retries(2, initial_delay=0.5), svc.Retries(2, initial_delay=0.5)),
        ],
        [-1, 11, 1.5, True, "3", {"max_retries": 3}, [3]],
    ),
    "callback_url": (
        "endpoint",
        [
            (None, None),
            ("https://example.com/hooks/svc", "https://example.com/hooks/svc"),
            ("http://127.0.0.1:8080/hooks?next=a@b", "http://127.0.0.1:8080/hooks?next=a@b"),
            ("HTTPS://[2001:db8::1]:8443/", "HTTPS://[2001:db8::1]:8443/"),
        ],
        [
            5,
            b"https://example.com/",
            "",
            "example.com/hooks",
            "ftp://example.com/hooks",
            "https:example.com",
            "https://",
            "https://:8080/",
            "https://example.com:99999/",
            "https://[2001:db8::1/",
            "https://user:pass@example.com/hooks",
            "https://example.com/a b",
            "https://example.com/\n",
            "https://example.com/" + "x" * 2029,
        ],
    ),
}


@pytest.mark.parametrize(
    "option,value,expected",
    [(option, good, expected) for option, (_, goods, _) in CASES.items() for good, expected in goods],
)
def test_a_good_value_is_kept_normalised(app, option, value, expected):
    options = declare(app, CASES[option][0], **{option: value})
    assert options[option] == expected
    assert type(options[option]) is type(expected)


@pytest.mark.parametrize(
    "option,value", [(option, bad) for option, (_, _, bads) in CASES.items() for bad in bads], ids=repr
)
def test_a_bad_value_is_rejected_naming_decorator_option_and_value(app, option, value):
    kind = CASES[option][0]
    with pytest.raises(svc.InvalidOptionError) as caught:
        declare(app, kind, **{option: value})
    message = str(caught.value)
    decorator = {"asgi": "app.asgi"}.get(kind, f"@app.{kind}")
    assert message.startswith(decorator + ": ")
    assert f"{option}={value!r}" in message
    assert caught.value.option == option
    assert app.workloads == ()  # nothing is registered when an option is rejected


def test_errors_are_value_errors_and_svc_errors(app):
    with pytest.raises(ValueError):
        app.endpoint(workers=0)
    with pytest.raises(svc.Error):
        app.endpoint(workers=0)


def test_options_are_checked_before_the_function_is_known(app):
    with pytest.raises(svc.InvalidOptionError):
        app.endpoint(memory="1G")  # no function given yet


DEFAULT_AUTOSCALER = svc.Autoscaler(max_containers=1, tasks_per_container=1, min_containers=0)
SCALED_DEFAULTS = {
    "autoscaler": DEFAULT_AUTOSCALER,
    "buffer_containers": 0,
    "max_pending_tasks": 100,
    "checkpoint_enabled": False,
    "authorized": True,
    "domain": None,
}


@pytest.mark.parametrize(
    "kind,defaults",
    [
        (
            "function",
            {
                "cpu": 1.0,
                "memory": "512Mi",
                "gpu": None,
                "autoscaler": DEFAULT_AUTOSCALER,
                "buffer_containers": 0,
                "checkpoint_enabled": False,
                "keep_warm_seconds": 60,
                "on_start": None,
                "timeout": 300.0,
                "retries": None,
                "schedule": None,
                "callback_url": None,
            },
        ),
        (
            "endpoint",
            {
                "cpu": 1.0,
                "memory": "512Mi",
                "gpu": None,
                "route": "/",
                "methods": ["GET", "POST"],
                "workers": 1,
                "concurrency": 1,
                **SCALED_DEFAULTS,
                "keep_warm": 60,
                "on_start": None,
                "timeout": 300.0,
                "callback_url": None,
                "cors": None,
            },
        ),
        (
            "asgi",
            {
                "cpu": 1.0,
                "memory": "512Mi",
                "gpu": None,
                "workers": 1,
                "concurrent_requests": 1,
                **SCALED_DEFAULTS,
                "keep_warm_seconds": 60,
                "openapi": "/openapi.json",
                "on_start": None,
                "callback_url": None,
            },
        ),
        (
            "realtime",
            {
                "cpu": 1.0,
                "memory": "512Mi",
                "gpu": None,
                "workers": 1,
                "concurrent_requests": 1,
                **SCALED_DEFAULTS,
                "keep_warm_seconds": 60,
                "on_start": None,
                "cors": None,
            },
        ),
    ],
)
def test_every_option_of_a_kind_gets_its_default_in_manifest_order(app, kind, defaults):
    options = declare(app, kind)
    assert dict(options) == defaults
    assert list(options) == list(defaults)


def test_timeout_also_bounds_functions_and_is_refused_by_asgi_and_realtime(app):
    assert declare(app, "function", timeout=30)["timeout"] == 30.0
    for kind in ("asgi", "realtime"):
        with pytest.raises(
            svc.InvalidOptionError,
            match=r"timeout=30 is not an option of .*: timeout belongs to @app\.function and @app\.endpoint",
        ):
            declare(app, kind, timeout=30)


def test_retries_belong_to_functions_only(app):
    with pytest.raises(
        svc.InvalidOptionError,
        match=r"@app\.endpoint: retries=2 is not an option of @app\.endpoint: retries belongs to @app\.function",
    ):
        declare(app, "endpoint", retries=2)


@pytest.mark.parametrize(
    "fields,message",
    [
        ({"max_retries": 11}, "max_retries=11 is out of range: pass a whole number from 0 to 10"),
        ({"max_retries": 2.0}, "max_retries=2.0 is a float, not an integer"),
        (
            {"max_retries": 2, "backoff_coefficient": 0.5},
            "backoff_coefficient=0.5 is out of range: pass a growth factor from 1 to 10",
        ),
        (
            {"max_retries": 2, "initial_delay": -1},
            "initial_delay=-1 is out of range: pass a number of seconds from 0 to 60",
        ),
        ({"max_retries": 2, "initial_delay": 61}, "initial_delay=61 is out of range"),
        ({"max_retries": 2, "max_delay": 0.5}, "max_delay=0.5 is out of range: pass a number of seconds from 1 to 60"),
        ({"max_retries": 2, "max_delay": "10"}, "max_delay='10' is a str, not a number"),
    ],
)
def test_retries_check_each_field_naming_it(fields, message):
    with pytest.raises(svc.InvalidOptionError) as caught:
        svc.Retries(**fields)
    assert str(caught.value).startswith("svc.Retries: " + message), str(caught.value)


def test_retries_wait_longer_each_time_up_to_max_delay_and_write_their_manifest_form():
    retries = svc.Retries(5, backoff_coefficient=3.0, initial_delay=0.5, max_delay=10.0)
    assert [retries.delay(n) for n in range(1, 6)] == [0.5, 1.5, 4.5, 10.0, 10.0]
    assert retries.to_dict() == {"max_retries": 5, "backoff_coefficient": 3.0, "initial_delay": 0.5, "max_delay": 10.0}
    assert svc.Retries(1) == svc.Retries(max_retries=1, backoff_coefficient=2.0, initial_delay=1.0, max_delay=60.0)


def test_openapi_names_the_asgi_apps_path_of_its_description_or_none_and_only_asgi_takes_it(app):
    assert declare(svc.App("a"), "asgi", openapi="/api/schema.json")["openapi"] == "/api/schema.json"
    assert type(declare(svc.App("b"), "asgi")["openapi"]) is str
    assert declare(app, "asgi", openapi=None)["openapi"] is None
    with pytest.raises(svc.InvalidOptionError, match=r"app\.asgi: openapi='openapi\.json' does not start with '/'"):
        declare(app, "asgi", openapi="openapi.json")
    with pytest.raises(svc.InvalidOptionError, match=r"openapi=5 is a int, not a string: pass the app's path"):
        declare(app, "asgi", openapi=5)
    with pytest.raises(svc.InvalidOptionError, match=r"openapi belongs to app\.asgi"):
        declare(app, "realtime", openapi="/openapi.json")
    assert "openapi" not in inspect.signature(app.realtime).parameters
    assert "openapi" in inspect.signature(app.asgi).parameters


@pytest.mark.parametrize(
    "value,why",
    [
        ("ftp://example.com/hooks", r"has the scheme ftp:, but svc POSTs callbacks over http: or https: only"),
        ("example.com/hooks", r"is not an absolute URL: pass the http or https URL of your receiver"),
        (
            "https://ops:s3cret@example.com/hooks",
            r"holds a user name or password \(user:pass@host\), which svc would store and show to everyone .* "
            r"check the X-Svc-Signature header",
        ),
        ("https://example.com/" + "x" * 2029, r"is 2049 characters long; svc takes at most 2048"),
        (42, r"is a int, not a string: pass the http or https URL"),
    ],
)
def test_callback_url_says_what_is_wrong_and_how_to_fix_it(app, value, why):
    with pytest.raises(svc.InvalidOptionError, match=r"^@app\.function: callback_url=.* " + why) as caught:
        declare(app, "function", callback_url=value)
    assert caught.value.option == "callback_url"


def test_callback_url_is_kept_in_the_manifest_by_functions_endpoints_and_asgi_apps_only(app):
    url = "https://example.com/hooks/svc"
    for kind in ("function", "endpoint", "asgi"):
        assert declare(svc.App(f"cb-{kind}"), kind, callback_url=url)["callback_url"] == url
    # Where it points is the server's to check when a call is made: loopback passes here.
    assert declare(app, "function", callback_url="http://localhost:9/h")["callback_url"] == "http://localhost:9/h"
    with pytest.raises(
        svc.InvalidOptionError, match=r"callback_url belongs to @app\.function and @app\.endpoint and app\.asgi"
    ):
        declare(app, "realtime", callback_url=url)
    assert "callback_url" not in inspect.signature(app.realtime).parameters
    assert "callback_url" in inspect.signature(app.asgi).parameters


def test_a_good_autoscaler_is_kept(app):
    scaler = svc.Autoscaler(max_containers=5, tasks_per_container=8, min_containers=1)
    assert declare(app, "endpoint", autoscaler=scaler)["autoscaler"] is scaler


@pytest.mark.parametrize("value", [{"max_containers": 3}, 3, None])
def test_autoscaler_must_be_an_autoscaler(app, value):
    with pytest.raises(svc.InvalidOptionError, match=r"not a svc\.Autoscaler: pass svc\.Autoscaler\("):
        declare(app, "endpoint", autoscaler=value)


@pytest.mark.parametrize("value", ["3.11", svc.Autoscaler(), 3.11])
def test_image_must_be_an_image(app, value):
    with pytest.raises(svc.InvalidOptionError, match=r"image=.* not a svc\.Image"):
        declare(app, "function", image=value)


def test_memory_with_a_decimal_unit_says_to_use_a_binary_unit(app):
    with pytest.raises(svc.InvalidOptionError) as caught:
        app.endpoint(memory="512MB")
    message = str(caught.value)
    assert "memory='512MB'" in message
    assert "use a binary unit such as 512Mi or 1Gi" in message
    assert "did you mean 512Mi?" in message


def test_memory_given_as_a_number_asks_for_a_string_with_a_unit(app):
    with pytest.raises(svc.InvalidOptionError, match="memory=512 is a int, not a string: use a binary unit"):
        app.function(memory=512)


def test_cpu_rejects_bool_as_not_a_number(app):
    with pytest.raises(svc.InvalidOptionError, match=r"cpu=True is a bool, not a number: pass a number of CPU cores"):
        app.function(cpu=True)


def test_cpu_out_of_range_gives_the_range(app):
    with pytest.raises(
        svc.InvalidOptionError, match="cpu=128 is out of range: pass a number of CPU cores from 0.125 to 64"
    ):
        app.function(cpu=128)


def test_methods_error_lists_the_allowed_methods(app):
    with pytest.raises(svc.InvalidOptionError) as caught:
        app.endpoint(methods=["FETCH"])
    assert "'FETCH'" in str(caught.value)
    assert "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS" in str(caught.value)


def test_methods_as_a_single_string_suggests_a_list(app):
    with pytest.raises(svc.InvalidOptionError, match=r"pass a list such as \['GET'\]"):
        app.endpoint(methods="get")


def test_route_without_a_leading_slash_suggests_one(app):
    with pytest.raises(svc.InvalidOptionError, match="write '/greet'"):
        app.endpoint(route="greet")


def test_domain_with_capitals_suggests_the_lower_case_form(app):
    with pytest.raises(svc.InvalidOptionError, match="write 'api.example.com'"):
        app.endpoint(domain="API.Example.com")


def test_unknown_option_suggests_the_closest_one(app):
    with pytest.raises(svc.InvalidOptionError) as caught:
        app.endpoint(memroy="1Gi")
    message = str(caught.value)
    assert message.startswith("@app.endpoint: memroy='1Gi' is not an option of @app.endpoint")
    assert "did you mean memory=?" in message
    assert caught.value.option == "memroy"


def test_unknown_option_without_a_close_match_lists_the_options(app):
    with pytest.raises(
        svc.InvalidOptionError,
        match="@app.function takes name, image, cpu, memory, gpu, autoscaler, buffer_containers, checkpoint_enabled, keep_warm_seconds, on_start, timeout, retries",
    ) as caught:
        app.function(replicas=2)
    assert "did you mean" not in str(caught.value)


@pytest.mark.parametrize(
    "kind,option,fix",
    [
        ("asgi", "concurrency", "use concurrent_requests="),
        ("realtime", "concurrency", "use concurrent_requests="),
        ("asgi", "keep_warm", "use keep_warm_seconds="),
        ("realtime", "keep_warm", "use keep_warm_seconds="),
        ("endpoint", "concurrent_requests", "use concurrency="),
        ("endpoint", "keep_warm_seconds", "use keep_warm="),
        ("asgi", "route", "ASGI apps define their own routes"),
        ("asgi", "methods", "ASGI apps define their own routes"),
        ("realtime", "route", "answers WebSocket messages at its own URL"),
        ("function", "route", "route belongs to @app.endpoint; @app.function takes name, image, cpu, memory"),
        ("function", "authorized", "authorized belongs to @app.endpoint and app.asgi and @app.realtime"),
    ],
)
def test_an_option_of_another_kind_says_what_to_write(app, kind, option, fix):
    with pytest.raises(svc.InvalidOptionError) as caught:
        declare(app, kind, **{option: 8})
    assert fix in str(caught.value)


def test_duplicate_workload_names_are_rejected(app):
    @app.endpoint
    def greet() -> str:
        return "hi"

    with pytest.raises(svc.InvalidOptionError, match="already has a workload named 'greet' \\(a endpoint, ") as caught:

        @app.function(name="greet")
        def other() -> None:
            pass

    assert caught.value.option == "name"
    assert [w.name for w in app.workloads] == ["greet"]


def test_the_same_name_in_two_apps_is_fine():
    first, second = svc.App("one"), svc.App("two")

    def f() -> None:
        pass

    first.function(f)
    second.function(f)
    assert first.workloads[0].name == second.workloads[0].name == "f"


@pytest.mark.parametrize("value", ["greet", "a", "a-b-9", "9lives", "x" * 63])
def test_good_names(app, value):
    handle = app.function(name=value)(lambda: None)
    assert handle.workload.name == value


@pytest.mark.parametrize("value", ["", "A-b_9", "_a", "a.b", "a b", "a--b", "-a", "a-", "x" * 64, 5])
def test_bad_names(app, value):
    with pytest.raises(svc.InvalidOptionError) as caught:
        app.function(name=value)
    assert caught.value.option == "name"


@pytest.mark.parametrize("kind", ["function", "endpoint", "asgi", "realtime"])
def test_every_decorator_documents_each_parameter_with_default_and_example(app, kind):
    method = getattr(app, kind)
    for name, parameter in inspect.signature(method).parameters.items():
        if parameter.kind is parameter.KEYWORD_ONLY:
            entry = re.search(
                rf"^ +{name} \(.+\):\n +\S.*\n +Default: ``(.+)``\. Example: ``(.+)``$", method.__doc__, re.MULTILINE
            )
            assert entry, f"{kind}: {name} is not documented with a default and an example"
            assert entry.group(2).startswith(("svc.", "app.")) or entry.group(2).startswith(name + "=")


@pytest.mark.parametrize("kind", ["function", "endpoint", "asgi", "realtime"])
def test_signature_defaults_match_the_option_table(app, kind):
    from svc._options import OPTIONS

    for name, parameter in inspect.signature(getattr(app, kind)).parameters.items():
        if parameter.kind is parameter.KEYWORD_ONLY:
            # secrets= and volumes= are the workload's own lists, not manifest options (docs/manifest.md).
            own = {"secrets": (), "volumes": {}, "scaledown_window": None}
            assert parameter.default == (own[name] if name in own else OPTIONS[name].default), name


@pytest.mark.parametrize("route", ["/café", "/a%20b", "/a<b>", '/a"b'])
def test_route_needing_percent_encoding_is_refused(app, route):
    with pytest.raises(svc.InvalidOptionError, match="need percent-encoding"):
        app.endpoint(route=route)


def test_route_with_every_allowed_character_is_accepted(app):
    route = "/v1/items:batch/~a-b_c.d/@x/$!&'()*+,;="

    @app.endpoint(route=route)
    def handler() -> None:
        return None

    assert handler.workload.options["route"] == route
