"""Serves one workload of an app on a TCP port, exactly as a container's worker serves it on its socket.

wrk cannot connect to a Unix socket, so the bench's "direct" figure comes from this process: the
same runtime code builds the same ASGI app (``make_app``) and runs it under the same uvicorn
settings (``svc.runtime._serve._config``: httptools, uvloop, no access log), with only the listening
socket changed from a Unix path to 127.0.0.1:PORT.

    python bench/gateway/direct_server.py ROOT ENTRY WORKLOAD PORT
"""

from __future__ import annotations

import sys


def main() -> int:
    root, entry, name, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    from svc.runtime._startup import load_workload, make_app, preload_server, require_server, warm

    require_server(preload_server())
    workload = load_workload(root, entry, name)
    app = make_app(workload, warm(workload))

    import uvicorn

    from svc.runtime._serve import _config

    config = _config(app, "")
    config.uds = None
    config.host = "127.0.0.1"
    config.port = port
    uvicorn.Server(config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
