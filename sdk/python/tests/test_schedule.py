"""svc.Cron and svc.Period (schedule= on @app.function): what the SDK checks, and the manifest form."""

from __future__ import annotations

import pytest
import svc
from helpers import run_python


def test_cron_defaults_and_manifest_form():
    cron = svc.Cron("  0 3  * * mon-fri ")
    assert cron.to_dict() == {"cron": "0 3 * * mon-fri", "timezone": "UTC", "overlap": False}
    assert svc.Cron("*/15 9-17 1,15 jan-jun 0", timezone="Europe/Paris", overlap=True).to_dict() == {
        "cron": "*/15 9-17 1,15 jan-jun 0",
        "timezone": "Europe/Paris",
        "overlap": True,
    }


@pytest.mark.parametrize(
    "expression,fix",
    [
        ("0 3 * *", "has 4 fields, not 5"),
        ("0 0 3 * * *", "has 6 fields, not 5"),
        ("", "has 0 fields, not 5"),
        ("61 * * * *", "field 1 (minute) '61' has 61, out of range: use 0 to 59"),
        ("0 24 * * *", "field 2 (hour) '24' has 24, out of range: use 0 to 23"),
        ("0 3 0 * *", "field 3 (day of month) '0' has 0, out of range: use 1 to 31"),
        ("0 3 * 13 *", "field 4 (month) '13' has 13, out of range: use 1 to 12"),
        ("0 3 * * 8", "field 5 (day of week) '8' has 8, out of range: use 0 to 7"),
        ("0 3 * * x", "'x', which is not a day of week name"),
        ("0 3 * mon *", "'mon', which is not a month name"),
        ("0 3 mon * *", "this field takes numbers and no names"),
        ("*/0 * * * *", "has a step of 0"),
        ("0 3 * * ?", "holds characters cron does not know"),
    ],
)
def test_cron_rejects_expressions_naming_the_field(expression, fix):
    with pytest.raises(svc.InvalidOptionError) as caught:
        svc.Cron(expression)
    assert str(caught.value).startswith(f"svc.Cron: expression={expression!r} ")
    assert fix in str(caught.value)


def test_cron_rejects_unknown_time_zones_and_non_bool_overlap():
    with pytest.raises(svc.InvalidOptionError, match=r"svc.Cron: timezone='Mars/Base' is not an IANA time zone name"):
        svc.Cron("0 3 * * *", timezone="Mars/Base")
    with pytest.raises(svc.InvalidOptionError, match=r"svc.Cron: overlap='yes' is a str, not a bool"):
        svc.Cron("0 3 * * *", overlap="yes")  # type: ignore[arg-type]
    with pytest.raises(svc.InvalidOptionError, match=r"svc.Cron: expression=3 is a int, not a string"):
        svc.Cron(3)  # type: ignore[arg-type]


def test_period_adds_up_its_parts():
    assert svc.Period(minutes=5).to_dict() == {"every": 300, "overlap": False}
    assert svc.Period(days=1, hours=2, minutes=3, seconds=4, overlap=True).to_dict() == {
        "every": 93784,
        "overlap": True,
    }
    assert svc.Period(seconds=1).total_seconds == 1
    assert svc.Period(days=366).total_seconds == 366 * 86400


@pytest.mark.parametrize(
    "kwargs,fix",
    [
        ({}, "makes a period of 0 seconds: use 1 second to 366 days"),
        ({"days": 366, "seconds": 1}, "makes a period of 31622401 seconds"),
        ({"seconds": 1.5}, "seconds=1.5 is a float, not an integer"),
        ({"minutes": -1}, "minutes=-1 is out of range"),
        ({"hours": True}, "hours=True is a bool, not an integer"),
    ],
)
def test_period_rejects_bad_parts(kwargs, fix):
    with pytest.raises(svc.InvalidOptionError) as caught:
        svc.Period(**kwargs)
    assert str(caught.value).startswith("svc.Period: ")
    assert fix in str(caught.value)


def test_schedule_option_on_functions_only_and_written_to_the_manifest():
    app = svc.App("sched")

    @app.function(schedule=svc.Period(minutes=5))
    def every_five() -> None:
        pass

    @app.function
    def plain() -> None:
        pass

    options = {w.name: dict(w.options) for w in app.workloads}
    assert options["every-five"]["schedule"] == svc.Period(minutes=5)
    assert options["plain"]["schedule"] is None
    with pytest.raises(
        svc.InvalidOptionError, match=r"@app.function: schedule='0 3 \* \* \*' is a str, not a svc.Cron or svc.Period"
    ):
        app.function(schedule="0 3 * * *")(lambda: None)
    with pytest.raises(svc.InvalidOptionError, match=r"schedule belongs to @app.function"):
        app.endpoint(schedule=svc.Period(minutes=5))(lambda: None)


def test_the_runtime_runs_a_scheduled_function_once(tmp_path):
    (tmp_path / "app.py").write_text(
        "import svc\napp = svc.App('once')\n"
        "@app.function(schedule=svc.Period(seconds=1))\ndef ok(context: svc.Context) -> None:\n    print('ran', context.method)\n"
        "@app.function(schedule=svc.Period(seconds=1))\nasync def bad() -> None:\n    raise ValueError('nope')\n"
    )

    def run(name: str):
        return run_python(
            "-m", "svc.runtime", "once", "--root", str(tmp_path), "--entry", "app", "--workload", name, timeout=60
        )

    ok = run("ok")
    assert (ok.returncode, ok.stdout) == (0, "ran SCHEDULE\n")
    bad = run("bad")
    assert bad.returncode == 6
    assert "ValueError: nope" in bad.stderr and "Traceback" in bad.stderr
