"""The cold-start bench's app: raw_asgi's ``hello``, kept warm for no time at all.

With ``keep_warm_seconds=0`` its container stops once a request is answered, so the next request
meets the workload at zero and starts one; `npm run bench` times that against a bare uvicorn spawn.
"""

import svc
from raw_asgi import hello

app = svc.App("bench-cold")
app.asgi(name="cold", workers=1, concurrent_requests=256, keep_warm_seconds=0, openapi=None)(hello)
