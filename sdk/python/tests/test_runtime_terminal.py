"""The terminal ``svc shell`` opens in a container (svc/runtime/_terminal.py), run as svc runs it: by its path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import svc.runtime._terminal as terminal

HELPER = Path(terminal.__file__)


def run_helper(typed: bytes, *args: str, control: list[dict] | None = None) -> tuple[int, bytes]:
    """Runs it with `typed` on its stdin, kept open until it exits (its end would hang the program up)."""
    read_end, write_end = os.pipe()
    os.write(write_end, "".join(json.dumps(size) + "\n" for size in control or []).encode())
    os.close(write_end)
    try:
        process = subprocess.Popen(
            [sys.executable, str(HELPER), "--control-fd", str(read_end), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            pass_fds=(read_end,),
        )
    finally:
        os.close(read_end)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(typed)
    process.stdin.flush()
    code = process.wait(timeout=20)
    process.stdin.close()
    return code, process.stdout.read()


def test_runs_the_command_on_a_terminal_of_the_size_asked_and_exits_as_it_did() -> None:
    code, screen = run_helper(b"", "--rows", "33", "--cols", "101", "--", "sh", "-c", "tty; stty size; exit 4")
    assert code == 4
    assert b"/dev/pts/" in screen
    assert b"33 101\r\n" in screen


def test_a_size_on_the_control_fd_resizes_the_terminal() -> None:
    code, screen = run_helper(b"", "--", "sh", "-c", "sleep 0.5; stty size", control=[{"rows": 50, "cols": 140}])
    assert code == 0
    assert b"50 140\r\n" in screen


def test_keys_typed_reach_the_program_and_a_signal_becomes_128_plus_it() -> None:
    code, screen = run_helper(b"echo typed-$((6*7))\nkill -KILL $$\n", "--", "sh")
    assert b"typed-42" in screen
    assert code == 128 + 9


def test_a_command_that_cannot_run_says_so_and_exits_127() -> None:
    code, screen = run_helper(b"", "--", "/no/such/program")
    assert code == 127
    assert b"svc: cannot run /no/such/program" in screen


def test_a_paste_larger_than_the_terminal_buffer_comes_through_while_its_echo_is_read() -> None:
    pasted = b"".join(b"%05d %s\n" % (i, b"x" * 90) for i in range(2000))  # about 190 KiB
    process = subprocess.Popen(
        [sys.executable, str(HELPER), "--", "sh", "-c", "cat; exit 0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    screen = bytearray()
    reader = threading.Thread(target=lambda: screen.extend(process.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    process.stdin.write(pasted + b"\x04")  # kept open: its end would hang the program up
    process.stdin.flush()
    assert process.wait(timeout=30) == 0
    process.stdin.close()
    reader.join()
    assert bytes(screen).count(b"x" * 90) >= 2000  # each line echoed by the terminal, then written by cat


def test_a_program_that_ignores_the_hang_up_is_killed_after_the_grace() -> None:
    process = subprocess.Popen(
        [sys.executable, str(HELPER), "--", "sh", "-c", "trap '' HUP; sleep 60"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None
    time.sleep(0.5)
    started = time.monotonic()
    process.stdin.close()  # the client went away
    assert process.wait(timeout=15) == 128 + 9
    assert 4 <= time.monotonic() - started < 10


def test_only_whole_sizes_in_range_are_taken() -> None:
    assert terminal.parse_size(b'{"rows": 40, "cols": 120}') == (40, 120)
    for bad in (
        b"{",
        b'{"rows": 0, "cols": 80}',
        b'{"rows": 24}',
        b'{"rows": 2.5, "cols": 80}',
        b'{"rows": true, "cols": 80}',
        b"[]",
    ):
        assert terminal.parse_size(bad) is None
