"""A warm ``.remote()`` against one HTTP round trip through the gateway, interleaved in one run.

For this checkout (and, with ``--base <checkout>``, another one built beside it: A/B) it starts
``svc server`` from the checkout's dist/ on a fresh data dir, deploys a scratch app with a
function ``f(x): return x`` and an endpoint answering ``{"ok": true}``, and starts a client
process on the checkout's SDK. After a warm-up each client times, trial after trial, one
``f.remote(1)`` and one keep-alive ``GET`` of the endpoint (``http.client``, with the bearer
token, as ``.request()`` sends it), in an order shuffled trial by trial; the clients take turns
trial by trial (each turn starts with an untimed GET), so a noisy neighbour weighs on both alike. ``--raw`` also times a bare
``POST /api/v1/runs/:id/calls`` on a kept-alive connection: the platform's part of a call.

    npm run build && python3 bench/remote-probe.py [--calls 300] [--raw] [--base ../other-checkout]

Images are built (once) in each checkout's .cache/svc unless SVC_CACHE_DIR is set.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parents[1]

APP = """
import svc

app = svc.App("remote-probe")


@app.function
def f(x):
    return x


@app.endpoint(name="ping", methods=["GET"])
def ping():
    return {"ok": True}
"""


class Side:
    """One checkout: its server, the app deployed there, and a client process timing calls."""

    def __init__(self, label: str, checkout: Path, scratch: Path) -> None:
        self.label = label
        self.checkout = checkout
        self.scratch = scratch
        self.project = scratch / "project"
        self.project.mkdir(parents=True)
        (self.project / "probe_app.py").write_text(textwrap.dedent(APP))
        self.server: subprocess.Popen[str] | None = None
        self.client: subprocess.Popen[str] | None = None

    def start(self, raw: bool) -> None:
        cli = self.checkout / "dist" / "cli" / "index.js"
        env = {k: v for k, v in os.environ.items() if k not in ("SVC_SERVER", "SVC_TOKEN", "SVC_PORT")}
        env.update(
            {"SVC_CACHE_DIR": os.environ.get("SVC_CACHE_DIR") or str(self.checkout / ".cache" / "svc"), "NO_COLOR": "1"}
        )
        data_dir = self.scratch / "data"
        self.server = subprocess.Popen(
            [
                "node",
                *os.environ.get("PROBE_NODE_ARGS", "").split(),
                str(cli),
                "server",
                "--port",
                "0",
                "--data-dir",
                str(data_dir),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=str(self.checkout),
        )
        url = _listening_url(self.server)
        token = (data_dir / "owner-token").read_text().strip()
        sdk = str(self.checkout / "sdk" / "python")
        client_env = {
            **os.environ,
            "SVC_SERVER": url,
            "SVC_TOKEN": token,
            "SVC_CONFIG_DIR": str(self.scratch / "config"),
            "PYTHONPATH": sdk,
        }
        deployed = subprocess.run(
            ["node", str(cli), "deploy", "probe_app.py"],
            cwd=self.project,
            capture_output=True,
            text=True,
            env=client_env,
        )
        if deployed.returncode != 0:
            raise SystemExit(f"{self.label}: deploy failed:\n{deployed.stdout}\n{deployed.stderr}")
        self.client = subprocess.Popen(
            [sys.executable, __file__, "--client", *(["--raw"] if raw else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=client_env,
            cwd=self.project,
        )

    def ask(self, command: str) -> dict[str, list[float]]:
        assert self.client is not None and self.client.stdin is not None and self.client.stdout is not None
        self.client.stdin.write(command + "\n")
        self.client.stdin.flush()
        line = self.client.stdout.readline()
        if not line:
            raise SystemExit(f"{self.label}: the client process ended")
        answer: dict[str, list[float]] = json.loads(line)
        return answer

    def stop(self) -> None:
        if self.client is not None and self.client.poll() is None:
            assert self.client.stdin is not None
            self.client.stdin.close()  # the client ends its runs and exits
            self.client.wait(30)
        if self.server is not None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.server.kill()


def _listening_url(server: subprocess.Popen[str]) -> str:
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert server.stdout is not None
        for line in server.stdout:
            if os.environ.get("PROBE_VERBOSE"):
                sys.stderr.write(f"server | {line}")
            match = re.search(r"svc server is listening on (\S+)", line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    ready.wait(60)
    if not found:
        server.kill()
        raise SystemExit("svc server did not start")
    return found[0]


def client(raw: bool) -> None:
    """The client process: times one trial per line read from stdin, answers the times as a JSON line."""
    sys.path.insert(0, os.getcwd())
    import probe_app  # type: ignore[import-not-found]

    url, token = os.environ["SVC_SERVER"], os.environ["SVC_TOKEN"]
    server = urlsplit(url)
    api = http.client.HTTPConnection(server.hostname, server.port)
    api.request("GET", "/api/v1/apps/remote-probe", headers={"Authorization": f"Bearer {token}"})
    view = json.loads(api.getresponse().read())
    endpoint = urlsplit(next(d["urls"]["path"] for d in view["deployments"] if d["workload"] == "ping"))
    plain = http.client.HTTPConnection(endpoint.hostname, endpoint.port)
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}

    def get() -> None:
        plain.request("GET", endpoint.path or "/", headers=headers)
        answer = plain.getresponse()
        body = answer.read()
        assert answer.status == 200, (answer.status, body)

    def remote() -> None:
        assert probe_app.f.remote(1) == 1

    probes: dict[str, Callable[[], None]] = {"remote": remote, "GET": get}
    if raw:
        import pickle

        from svc._client._remote import _runs

        remote()
        run_id = next(iter(_runs.values())).id
        call = pickle.dumps({"args": [1], "kwargs": {}}, protocol=5)
        bare = http.client.HTTPConnection(server.hostname, server.port)
        call_headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/vnd.svc.call+pickle",
            "Accept": "application/x-ndjson",
        }

        def raw_call() -> None:
            bare.request("POST", f"/api/v1/runs/{run_id}/calls", body=call, headers=call_headers)
            answer = bare.getresponse()
            data = answer.read()
            assert answer.status == 200 and b'"result"' in data, (answer.status, data)

        probes["raw call"] = raw_call
    shuffled = random.Random(21)
    for command in sys.stdin:
        rounds = int(command.split()[1]) if command.startswith("warm") else 1
        times: dict[str, list[float]] = {name: [] for name in probes}
        # An untimed GET first: the first request after the other side's turn pays for caches and
        # scheduling the other side left cold, and would weigh on whichever probe went first.
        get()
        for _ in range(rounds):
            order = list(probes.items())
            shuffled.shuffle(order)  # no probe always follows the same one
            for name, probe in order:
                start = time.perf_counter()
                probe()
                times[name].append((time.perf_counter() - start) * 1000)
        print(json.dumps(times), flush=True)
    from svc._client import end_runs

    end_runs()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300, help="trials per client")
    parser.add_argument("--warm", type=int, default=30, help="warm-up trials per client")
    parser.add_argument(
        "--raw", action="store_true", help="also time a bare POST of the call on a kept-alive connection"
    )
    parser.add_argument("--base", type=Path, help="another built checkout to compare with, turn by turn")
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.client:
        return client(options.raw)

    scratch = Path(tempfile.mkdtemp(prefix="svc-remote-probe-"))
    sides = [Side("this", HERE, scratch / "this")]
    if options.base is not None:
        sides.insert(0, Side("base", options.base.resolve(), scratch / "base"))
    try:
        for side in sides:
            side.start(options.raw)
        for side in sides:
            side.ask(f"warm {options.warm}")
        times: dict[str, dict[str, list[float]]] = {side.label: {} for side in sides}
        for trial in range(options.calls):
            for side in sides if trial % 2 == 0 else sides[::-1]:
                for name, values in side.ask("trial").items():
                    times[side.label].setdefault(name, []).extend(values)
        print(f"{options.calls} trials per client after {options.warm} warm-up ones, sides taking turns (ms)")
        for label, measured in times.items():
            base = statistics.median(measured["GET"])
            for name, values in measured.items():
                median = statistics.median(values)
                print(
                    f"  {label:4s} {name:8s} median {median:6.3f}  p90 {percentile(values, 0.9):6.3f}  "
                    f"min {min(values):6.3f}  ÷ GET {median / base:4.2f}"
                )
    finally:
        for side in sides:
            side.stop()


if __name__ == "__main__":
    main()
