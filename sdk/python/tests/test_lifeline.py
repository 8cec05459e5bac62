"""The lifeline: end-of-file on stdin (the platform died) triggers the shutdown callback."""

from __future__ import annotations

import os
import threading

from svc.runtime import _lifeline


def test_closing_the_write_end_of_the_pipe_calls_back():
    read_end, write_end = os.pipe()
    closed = threading.Event()
    try:
        thread = _lifeline.watch(read_end, closed.set)
        assert thread is not None and thread.daemon
        os.write(write_end, b"data is ignored\n")
        assert not closed.wait(0.1)
        os.close(write_end)
        assert closed.wait(5)
    finally:
        os.close(read_end)


def test_a_regular_file_or_dev_null_is_no_lifeline(tmp_path):
    path = tmp_path / "stdin.txt"
    path.write_text("")
    with open(path) as regular, open(os.devnull) as null:
        assert _lifeline.watch(regular.fileno(), lambda: None) is None
        assert _lifeline.watch(null.fileno(), lambda: None) is None


def test_a_socket_counts_as_a_lifeline():
    import socket

    left, right = socket.socketpair()  # what Node's child_process uses for stdio pipes
    with left, right:
        assert _lifeline.has_lifeline(left.fileno())
