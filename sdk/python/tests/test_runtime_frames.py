"""Frames: the JSON lines the runtime writes to the platform, and the pump that turns a pipe into lines."""

from __future__ import annotations

import json
import os

from svc.runtime._frames import MAX_LINE, FrameStream, FrameWriter, LinePump


def read_frames(fd: int) -> list[dict]:
    os.set_blocking(fd, False)
    data = b""
    try:
        while chunk := os.read(fd, 65536):
            data += chunk
    except BlockingIOError:
        pass
    return [json.loads(line) for line in data.decode().splitlines()]


def test_a_writer_sends_one_json_object_per_line_and_goes_quiet_when_the_reader_is_gone():
    read_end, write_end = os.pipe()
    writer = FrameWriter(write_end)
    writer.event({"event": "listening", "worker": 0, "pid": 1, "socket": "/s"})
    writer.send({"t": "err", "text": "line with \n inside"})
    assert read_frames(read_end) == [
        {"t": "event", "event": "listening", "worker": 0, "pid": 1, "socket": "/s"},
        {"t": "err", "text": "line with \n inside"},
    ]
    os.close(read_end)
    writer.send({"t": "out", "text": "nobody listens"})  # EPIPE: no exception, the lifeline handles the rest
    assert writer.fd is None
    os.close(write_end)
    FrameWriter(None).send({"t": "out", "text": "no pipe at all"})


def test_a_pump_hands_over_whole_lines_and_the_last_one_at_end_of_file():
    read_end, write_end = os.pipe()
    lines: list[str] = []
    pump = LinePump(read_end, lines.append)
    os.write(write_end, b"one\r\ntw")
    assert pump.read() and lines == ["one"]
    os.write(write_end, b"o\n\xff bad byte\nlast")
    assert pump.read() and lines == ["one", "two", "\ufffd bad byte"]
    os.close(write_end)
    assert pump.read() is False
    assert lines[-1] == "last"
    os.close(read_end)


def test_a_pump_splits_a_line_longer_than_the_limit():
    read_end, write_end = os.pipe()
    lines: list[str] = []
    pump = LinePump(read_end, lines.append)
    left = MAX_LINE + 10
    while left:  # in pieces a pipe holds, read as they come
        left -= os.write(write_end, b"x" * min(left, 16384))
        pump.read()
    os.close(write_end)
    while pump.read():
        pass
    assert [len(line) for line in lines] == [MAX_LINE, 10]
    os.close(read_end)


def test_a_frame_stream_sends_each_line_as_it_completes():
    read_end, write_end = os.pipe()
    stream = FrameStream(FrameWriter(write_end), "err")
    stream.write("svc runtime: a")
    stream.write(" message\nand a half")
    assert read_frames(read_end) == [{"t": "err", "text": "svc runtime: a message"}]
    stream.flush()
    assert read_frames(read_end) == [{"t": "err", "text": "and a half"}]
    os.close(read_end)
    os.close(write_end)
