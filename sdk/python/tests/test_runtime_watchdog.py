"""The worker's one watchdog thread (``svc.runtime._watchdog``): a watched block past its deadline is
reported once, a released one never, and a deadline earlier than the one the thread sleeps for wakes it."""

from __future__ import annotations

import threading
import time

from svc.runtime._watchdog import Watchdog


def test_calls_overdue_for_a_deadline_passed_and_not_for_one_released() -> None:
    watchdog = Watchdog()
    fired: list[str] = []
    done = threading.Event()
    released = watchdog.watch(0.05, lambda: fired.append("released"))
    watchdog.watch(0.1, lambda: (fired.append("overdue"), done.set()))
    watchdog.release(released)
    assert done.wait(10)
    time.sleep(0.1)  # the released deadline has passed too by now
    assert fired == ["overdue"]


def test_an_earlier_deadline_wakes_the_thread_sleeping_for_a_later_one() -> None:
    watchdog = Watchdog()
    done = threading.Event()
    watchdog.watch(3600, lambda: None)  # the thread sleeps for this one
    time.sleep(0.05)
    watchdog.watch(0.05, done.set)
    assert done.wait(10), "the earlier deadline waited for the later one"


def test_one_thread_watches_every_block() -> None:
    watchdog = Watchdog()
    before = threading.active_count()
    keys = [watchdog.watch(3600, lambda: None) for _ in range(20)]
    assert threading.active_count() == before + 1
    for key in keys:
        watchdog.release(key)
