"""``within`` and ``watchdog`` (svc.runtime._timeouts): a call's time-out on the loop, and the thread behind it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

import pytest
from svc.runtime import _timeouts


def run(coro):
    return asyncio.run(coro)


def test_a_call_that_finishes_in_time_is_finished():
    async def main():
        async def quick():
            await asyncio.sleep(0.01)

        return await _timeouts.within(quick(), 5)

    assert run(main()) is True


def test_a_call_past_its_time_is_cancelled_and_reported_and_the_caller_goes_on():
    unwound = []

    async def main():
        async def slow():
            try:
                await asyncio.sleep(10)
            finally:
                unwound.append(True)

        finished = await _timeouts.within(slow(), 0.05)
        await asyncio.sleep(0)  # the task is not cancelled any more
        return finished

    assert run(main()) is False
    assert unwound == [True]


def test_the_codes_own_timeout_error_is_not_svcs():
    async def main():
        async def raises():
            raise TimeoutError("mine")

        return await _timeouts.within(raises(), 5)

    with pytest.raises(TimeoutError, match="mine"):
        run(main())


def test_a_cancellation_from_outside_goes_on():
    async def main():
        async def slow():
            await asyncio.sleep(10)

        task = asyncio.ensure_future(_timeouts.within(slow(), 5))
        await asyncio.sleep(0.01)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        run(main())


def test_sys_exit_in_the_call_reaches_the_caller_and_the_loop_goes_on():
    async def main():
        async def exits():
            sys.exit(3)

        try:
            await _timeouts.within(exits(), 5)
        except SystemExit as exc:
            await asyncio.sleep(0.01)
            return exc.code

    assert run(main()) == 3


def test_one_watchdog_thread_serves_every_call_and_ends_a_process_whose_call_blocks_past_its_time():
    script = textwrap.dedent("""
        import threading, time
        from svc.runtime import _timeouts
        for _ in range(200):
            with _timeouts.watchdog("w", "GET /quick", 5):
                pass
        print(sum(t.name == "svc-watchdog" for t in threading.enumerate()), flush=True)
        with _timeouts.watchdog("w", "GET /blocks", 0.1):
            time.sleep(10)
        print("not reached", flush=True)
    """)
    sdk = os.path.dirname(os.path.dirname(os.path.abspath(_timeouts.__file__)))
    env = {**os.environ, "PYTHONPATH": os.path.dirname(sdk)}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20, env=env)
    assert result.stdout.split() == ["1"]
    assert result.returncode == _timeouts.EXIT_TIMED_OUT
    assert "w: GET /blocks timed out after 0.1 s and blocked the event loop" in result.stderr
