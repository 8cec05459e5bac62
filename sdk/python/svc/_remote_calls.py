"""What every remotely callable function has, whoever holds it: ``.remote``, ``.spawn``, ``.spawn_map``, ``.map``,
``.starmap`` and ``.for_each``. A decorated function (``FunctionHandle``) calls the code of its
project; ``svc.Function.from_name(app, name)`` the deployed version of an app's function. The
client (``svc._client``) is imported on first use, so declaring an app imports nothing of it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from . import _checks
from ._function_call import FunctionCall

if TYPE_CHECKING:
    from ._client._remote import Target


class RemoteCalls:
    """The calls of one function on the svc server; subclasses say where its code is (``_target``)."""

    def _label(self) -> str:
        """How messages name the function."""
        raise NotImplementedError

    def _check(self, call: str) -> None:
        """Raises ``TypeError`` when ``call`` (``.remote()``, ``.map()``, …) does not apply; here it always does."""

    def _target(self) -> Target:
        """The server and the code the calls go to (found, and uploaded when needed, at the first call)."""
        raise NotImplementedError

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the function in a container of the svc server and returns its result.

        Starts a run of the function (or reuses the one this process started), prints the lines
        the function prints as they come, and returns its result or raises its exception. The
        first call of a new image waits for the image to build. See docs/sdk.md, "Calling your code".
        """
        self._check(".remote()")
        from ._client._remote import call_target

        return call_target(self._target(), args, kwargs)

    def spawn(self, *args: Any, **kwargs: Any) -> FunctionCall:
        """Starts one call and returns at once: a ``svc.FunctionCall`` to ``get()`` its result later.

        The server records the call before this returns and runs it even if this process exits;
        a restart of svc while it runs runs it again while the function's ``retries`` allow. Its
        outcome is kept for a day by default. See docs/sdk.md, "Calls that outlive the caller".
        """
        self._check(".spawn()")
        from ._client._spawn import spawn_call

        target = self._target()
        return FunctionCall(spawn_call(target, args, kwargs), _script_entry=target.script_entry)

    def spawn_map(self, *iterables: Iterable[Any], kwargs: dict[str, Any] | None = None) -> FunctionCall:
        """Spawns one call per input, ``f(a, b, **kwargs)`` for each ``a, b`` of ``zip(*iterables)``, and
        returns once every input is recorded: a ``svc.FunctionCall`` of the group (``get(index=i)``,
        ``iter()``, ``num_inputs()``, ``cancel()``; ``FunctionCall.from_id`` in any process).

        Each input is a spawned call of its own (recorded, run at least once, retried, kept for a
        day by default), so the group outlives this process. At most 100,000 inputs a group (use
        ``.map`` for more). An input that does not pickle raises ``TypeError`` naming its index, and
        the inputs recorded before it are cancelled. See docs/sdk.md, "Calls that outlive the caller".
        """
        call = f"{self._label()}.spawn_map()"
        self._check(".spawn_map()")
        if not iterables:
            raise TypeError(f"{call} takes at least one iterable of arguments")
        given = cast(object, kwargs)  # the annotation says dict; untyped callers may pass anything
        if given is not None and not isinstance(given, dict):
            raise TypeError(
                f"{call}: kwargs must be a dict of keyword arguments for every call, not {_checks.type_name(given)}"
            )
        iterators = [_iterator(iterable, call, i) for i, iterable in enumerate(iterables)]
        from ._client._groups import spawn_group

        target = self._target()
        group = spawn_group(target, zip(*iterators, strict=False), dict(kwargs or {}))
        return FunctionCall(group, _script_entry=target.script_entry)

    def map(
        self, *iterables: Iterable[Any], order_outputs: bool = True, return_exceptions: bool = False
    ) -> Iterator[Any]:
        """Calls the function remotely once per input, ``f(a, b)`` for each ``a, b`` of ``zip(*iterables)``;
        yields the results as they come, in input order unless ``order_outputs=False``.

        The inputs are read lazily and sent in batches, and the function's containers scale on
        the backlog up to its ``autoscaler``'s ``max_containers``: a generator of a million inputs
        works, and neither side holds them all. What the function prints is printed here. An input
        that raises raises here, as ``.remote()`` would (and the map is cancelled), unless
        ``return_exceptions=True``: then the exception takes the result's place. Closing the
        generator early (``break``, Ctrl-C) cancels the inputs not started yet. The iterables are
        checked now (``TypeError`` for one that is not iterable); the map starts at the first result
        asked for. See docs/sdk.md, "Fan-out".
        """
        call = f"{self._label()}.map()"
        self._check(".map()")
        if not iterables:
            raise TypeError(f"{call} takes at least one iterable of arguments")
        iterators = [_iterator(iterable, call, i) for i, iterable in enumerate(iterables)]
        return self._mapped(zip(*iterators, strict=False), order_outputs, return_exceptions)

    def starmap(
        self, iterable: Iterable[Iterable[Any]], order_outputs: bool = True, return_exceptions: bool = False
    ) -> Iterator[Any]:
        """Like ``.map()``, with each input a tuple of arguments: ``f(*args)`` for each ``args`` of ``iterable``."""
        call = f"{self._label()}.starmap()"
        self._check(".starmap()")
        return self._mapped(_argument_tuples(_iterator(iterable, call, 0), call), order_outputs, return_exceptions)

    def for_each(self, *iterables: Iterable[Any], ignore_exceptions: bool = False) -> None:
        """Like ``.map()``, for the calls' effects: returns None once every input ran (results are dropped).

        The first input that raises raises here (the others not started are cancelled), unless
        ``ignore_exceptions=True``.
        """
        for _ in self.map(*iterables, order_outputs=False, return_exceptions=ignore_exceptions):
            pass

    def _mapped(self, inputs: Iterator[tuple[Any, ...]], order_outputs: bool, return_exceptions: bool) -> Iterator[Any]:
        from ._client import map_remote

        return map_remote(self._target, inputs, order_outputs=order_outputs, return_exceptions=return_exceptions)


def _iterator(iterable: Iterable[Any], call: str, position: int) -> Iterator[Any]:
    """``iter(iterable)``, or a ``TypeError`` that says which argument of ``call`` is not iterable."""
    try:
        return iter(iterable)
    except TypeError:
        raise TypeError(
            f"{call}: argument {position + 1} is not iterable ({_checks.type_name(iterable)}); pass a list, "
            "a range, a generator or another iterable of inputs"
        ) from None


def _argument_tuples(items: Iterator[Iterable[Any]], call: str) -> Iterator[tuple[Any, ...]]:
    """Each item of a ``starmap`` as its tuple of arguments (read lazily, like the items)."""
    for index, item in enumerate(items):
        try:
            yield tuple(item)
        except TypeError:
            raise TypeError(
                f"{call}: input {index} is not a tuple of arguments ({_checks.type_name(item)}); "
                "each input of starmap is the arguments of one call, e.g. (1, 2)"
            ) from None
