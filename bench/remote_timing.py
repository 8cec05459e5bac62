"""A warm ``square.remote()`` against one HTTP round trip through the gateway, from the same process.

Run by `npm run bench` (bench/lifecycle.ts) in a deployed copy of examples/quickstart, with
SVC_SERVER and SVC_TOKEN set. After a warm-up, alternates a ``square.remote(i)`` and a GET of the
``hello`` endpoint on one kept-alive connection, CALLS times each; prints one JSON line of times (ms).

    python bench/remote_timing.py HELLO_URL CALLS
"""

import http.client
import json
import os
import sys
import time
import urllib.parse

sys.path.insert(0, os.getcwd())  # the quickstart copy: `app` is imported from there, as its project root

from app import square  # noqa: E402


def main() -> int:
    url, calls = urllib.parse.urlsplit(sys.argv[1]), int(sys.argv[2])
    target = f"{url.path}?{url.query}"
    connection = http.client.HTTPConnection(url.hostname, url.port)

    def get() -> None:
        connection.request("GET", target)
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise SystemExit(f"GET {target} answered {response.status}")

    for i in range(20):
        assert square.remote(i) == i * i
        get()
    remote, plain = [], []
    for i in range(calls):
        started = time.perf_counter()
        square.remote(i)
        remote.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        get()
        plain.append((time.perf_counter() - started) * 1000)
    print(json.dumps({"remote_ms": remote, "http_ms": plain}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
