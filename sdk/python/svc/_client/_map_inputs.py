"""The inputs of a ``.map()``: pulled lazily, pickled, and sent in batches from threads of their own.

Two threads, so that the caller's thread only reads results:

- the *puller* takes the inputs from the caller's iterables one at a time, pickles each
  (``_pickles.dump_call``) into its NDJSON line and puts it in a queue bounded in lines and
  in bytes: it stops pulling while the queue is full;
- the *poster* takes what the queue holds (waiting for the first line only) and sends it as
  one batch (``POST /api/v1/maps/:id/inputs``): at most ``MAX_BATCH_INPUTS`` inputs or about
  ``MAX_BATCH_BYTES``. The server answers a batch once all its inputs are in the map's window,
  so while the poster waits the queue fills and the next batch is larger; inputs that come
  slowly go one or a few at a time, so the first result comes fast.

So the caller's iterables are read only as far ahead as the queue, one batch in flight and
the server's window, however long they are. A failure here (an input that does not pickle,
the caller's iterable raising, an answer svc refuses) is kept in ``error``, and the map is
cancelled so that the caller's thread, reading the outputs, sees it end and raises it.
"""

from __future__ import annotations

import base64
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from . import _pickles
from ._errors import error_from_answer
from ._http import Api

MAX_BATCH_INPUTS = 1000
"""Inputs one batch holds at most (the server's bound)."""
MAX_BATCH_BYTES = 4 * 1024 * 1024
"""A batch is sent once it holds this many bytes of lines (one larger input goes alone)."""
QUEUE_INPUTS = 1000
"""Pickled inputs waiting for the poster, at most."""
QUEUE_BYTES = 8 * 1024 * 1024
"""Bytes of pickled inputs waiting for the poster, at most (one larger input always fits)."""
NDJSON = "application/x-ndjson"

_END = object()
"""In the queue after the last input."""


class _Failed:
    """In the queue in place of an input that failed (to pickle, or the caller's iterable raised)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


_Item = Any  # bytes (an input's line), _END or _Failed


class _BoundedQueue:
    """A FIFO bounded in items and in bytes; ``close()`` wakes and stops both sides."""

    def __init__(self) -> None:
        self._items: deque[_Item] = deque()
        self._bytes = 0
        self._closed = False
        self._changed = threading.Condition()

    def put(self, item: _Item) -> bool:
        """Waits for room; False once closed."""
        size = len(item) if isinstance(item, bytes) else 0
        with self._changed:
            while (
                not self._closed
                and self._items
                and (len(self._items) >= QUEUE_INPUTS or self._bytes + size > QUEUE_BYTES)
            ):
                self._changed.wait()
            if self._closed:
                return False
            self._items.append(item)
            self._bytes += size
            self._changed.notify_all()
            return True

    def take(self, most: int, most_bytes: int) -> list[_Item] | None:
        """Waits for one item, then takes what is there (up to ``most`` items or about ``most_bytes``); None once closed."""
        with self._changed:
            while not self._closed and not self._items:
                self._changed.wait()
            if self._closed:
                return None
            taken: list[_Item] = []
            size = 0
            while self._items and len(taken) < most and size < most_bytes:
                item = self._items.popleft()
                taken.append(item)
                size += len(item) if isinstance(item, bytes) else 0
                if not isinstance(item, bytes):
                    break  # the end, or a failure: nothing after it is sent
            self._bytes -= size
            self._changed.notify_all()
            return taken

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._items.clear()
            self._changed.notify_all()


def input_line(index: int, args: tuple[Any, ...], script_entry: str | None, method: str | None = None) -> bytes:
    """Input ``index`` as its NDJSON line; ``TypeError`` naming the index and the type of the value that does not pickle."""
    pickled = pickled_input(index, args, {}, script_entry, "the map", method)
    return b'{"index":%d,"pickle":"%s"}\n' % (index, base64.b64encode(pickled))


def pickled_input(
    index: int,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    script_entry: str | None,
    of: str,
    method: str | None = None,
) -> bytes:
    """Input ``index`` of ``of`` (``the map``, ``spawn_map``) pickled as a call; ``TypeError`` naming
    the index and the type of the value that does not pickle."""
    try:
        return _pickles.dump_call(args, kwargs, script_entry, method)
    except Exception as error:
        culprit = next((arg for arg in [*args, *kwargs.values()] if not _pickles_alone(arg, script_entry)), args)
        raise TypeError(
            f"input {index} of {of} cannot be pickled: {_describe(culprit)} does not pickle "
            f"({type(error).__name__}: {error}). Arguments travel as pickles: pass values that pickle "
            "(open files, locks, sockets and generators do not)."
        ) from error


def _pickles_alone(value: Any, script_entry: str | None) -> bool:
    try:
        _pickles.dumps(value, script_entry)
    except Exception:
        return False
    return True


def _describe(value: object) -> str:
    cls = type(value)
    name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    return f"a value of type {name}"


class InputSender:
    """Sends one map's inputs; ``error`` holds what stopped it, if anything did."""

    def __init__(
        self,
        api: Api,
        map_id: str,
        inputs: Iterator[tuple[Any, ...]],
        script_entry: str | None,
        cancel: Callable[[], None],
        method: str | None = None,
    ) -> None:
        self.error: BaseException | None = None
        self._api = api
        self._map_id = map_id
        self._inputs = inputs
        self._script_entry = script_entry
        self._method = method
        self._cancel = cancel
        self._queue = _BoundedQueue()
        self._stopped = threading.Event()
        self._puller = threading.Thread(target=self._pull, name=f"svc-{map_id}-pull", daemon=True)
        self._poster = threading.Thread(target=self._post, name=f"svc-{map_id}-post", daemon=True)

    def start(self) -> None:
        self._puller.start()
        self._poster.start()

    def stop(self) -> None:
        """Pulls and sends no more (a batch the server holds is answered once the map is cancelled)."""
        self._stopped.set()
        self._queue.close()

    def _pull(self) -> None:
        try:
            for index, args in enumerate(self._inputs):
                if self._stopped.is_set() or not self._queue.put(
                    input_line(index, args, self._script_entry, self._method)
                ):
                    return
            self._queue.put(_END)
        except BaseException as error:  # noqa: BLE001 - the caller's iterable raised (anything): the caller gets it
            self._queue.put(_Failed(error))

    def _post(self) -> None:
        try:
            while not self._stopped.is_set():
                items = self._queue.take(MAX_BATCH_INPUTS, MAX_BATCH_BYTES)
                if items is None:
                    return
                if isinstance(items[-1], _Failed):
                    self._fail(items[-1].error)
                    return
                last = items[-1] is _END
                lines = [item for item in items if isinstance(item, bytes)]
                if not self._send(b"".join(lines), last) or last:
                    return
        except BaseException as error:  # noqa: BLE001 - any failure of the poster is the caller's to see
            self._fail(error)

    def _send(self, body: bytes, last: bool) -> bool:
        """One batch, answered once its inputs are in the window; False when the map takes no more (it was cancelled)."""
        path = f"/maps/{self._map_id}/inputs" + ("?last=true" if last else "")
        headers = {"Content-Type": NDJSON} if body else {}
        with self._api.open("POST", path, body=body, headers=headers, timeout=None, reuse=True) as stream:
            data = stream.read()
            stream.finish()
        if stream.status == 409:
            return False  # cancelled meanwhile: the outputs' end frame says why
        if stream.status != 202:
            raise error_from_answer(stream.status, data, f"POST /api/v1{path}")
        return True

    def _fail(self, error: BaseException) -> None:
        if self._stopped.is_set():
            return
        self.error = error
        self.stop()
        self._cancel()
