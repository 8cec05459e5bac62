"""Running user code from the event loop: sync code in a thread pool, async code on the loop."""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

_DONE = object()


def is_async(fn: Any) -> bool:
    """True for ``async def`` functions and async generator functions (including behind a partial)."""
    target = fn.func if isinstance(fn, functools.partial) else fn
    return inspect.iscoroutinefunction(target) or inspect.isasyncgenfunction(target)


class Runner:
    """Calls one workload's code: sync functions in a pool of ``threads`` threads, so a slow
    handler never blocks the loop; async functions on the loop itself."""

    def __init__(self, name: str, threads: int) -> None:
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"svc-{name}")

    async def run_sync(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the pool."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)``; an awaitable result (a coroutine) is awaited on the loop."""
        if is_async(fn):
            result = fn(*args, **kwargs)
        else:
            result = await self.run_sync(functools.partial(fn, *args, **kwargs))
        return await result if inspect.isawaitable(result) else result

    async def iterate(self, items: Any) -> AsyncGenerator[Any, None]:
        """The items of an iterable as they come: an async iterable on the loop, a generator
        advanced in the pool (its code may block), anything else (a list) directly."""
        if hasattr(items, "__aiter__"):
            async for item in items:
                yield item
        elif inspect.isgenerator(items):
            while (item := await self.run_sync(next, items, _DONE)) is not _DONE:
                yield item
        else:
            for item in items:
                yield item

    async def close(self, items: Any) -> None:
        """Closes a generator that was not run to its end, so its ``finally`` blocks run.

        A sync generator still running in a thread (its client went away while it was
        producing an item) cannot be closed; it is left to finish that item.
        """
        try:
            if inspect.isasyncgen(items):
                await items.aclose()
            elif inspect.isgenerator(items) and not items.gi_running:
                await self.run_sync(items.close)
        except Exception:  # a generator failing while it closes: its stream is over anyway
            pass
