"""``mount_prefix``: the URL prefix an ASGI app is mounted under, from the gateway's ``x-forwarded-prefix``."""

from __future__ import annotations

import pytest

from svc.runtime._asgi import mount_prefix


def scope(*headers: tuple[bytes, bytes]) -> dict[str, object]:
    return {"type": "http", "headers": [(b"host", b"svc"), *headers]}


@pytest.mark.parametrize("headers, prefix", [
    ([(b"x-forwarded-prefix", b"/default/app/web")], "/default/app/web"),
    ([(b"X-Forwarded-Prefix", b"/default/app/web/")], "/default/app/web"),
    ([], ""),
    ([(b"x-forwarded-prefix", b"")], ""),
    ([(b"x-forwarded-prefix", b"/a b")], ""),
    ([(b"x-forwarded-prefix", b"relative/path")], ""),
    ([(b"x-forwarded-prefix", b"/default/app/web"), (b"x-forwarded-prefix", b"/other")], ""),
    ([(b"x-forwarded-prefixes", b"/default/app/web")], ""),
])
def test_reads_one_well_formed_prefix_and_ignores_anything_else(headers, prefix):
    assert mount_prefix(scope(*headers)) == prefix
    assert mount_prefix(scope(*headers)) == prefix, "the same answer from the remembered verdict"
