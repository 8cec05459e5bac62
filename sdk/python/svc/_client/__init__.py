"""The Python client of a svc server: ``.remote()``, ``.request()`` and what they share.

One small module per job, so each can be read (and tested) on its own:

- ``_credentials``: which server and which token (docs/cli.md, "Which server, which token");
- ``_http``: requests over ``http.client`` (the SDK needs no third-party package);
- ``_errors``: the server's error codes as typed exceptions (``svc.exceptions``);
- ``_project``: the project, manifest and bundle of a workload, found as the CLI finds them;
- ``_pickles``: the pickled call and its answer, across the ``__main__`` boundary;
- ``_progress``: the image build's lines while a new run starts;
- ``_remote``: ``<function>.remote(...)``: runs, calls, frames;
- ``_map`` and ``_map_inputs``: ``<function>.map(...)`` and its kin: inputs sent in batches, outputs read as they come;
- ``_request`` and ``_response``: ``<endpoint>.request(...)`` and ``<asgi>.request(...)``.

Imported lazily by the handles (``svc._workloads``), so ``import svc`` stays cheap.
"""

from ._credentials import Credentials, find_credentials
from ._map import map_remote
from ._remote import call_remote, end_runs
from ._request import asgi_request, endpoint_request
from ._response import Response

__all__ = [
    "Credentials",
    "Response",
    "asgi_request",
    "call_remote",
    "end_runs",
    "endpoint_request",
    "find_credentials",
    "map_remote",
]
