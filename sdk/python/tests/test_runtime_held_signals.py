"""A stop signal sent to a forked child before it resets its handlers is delivered, not lost."""

from __future__ import annotations

import os
import signal

from svc.runtime._held_signals import fork_holding_stop_signals, release_in_child


def _forked_child_stopped_early(fork) -> int:
    """Forks with ``fork``; SIGTERM reaches the child before it resets its handlers; returns its wait status."""
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)  # a parent's handler that only notes a stop
    go_r, go_w = os.pipe()
    try:
        pid, reset = fork()
        if pid == 0:
            os.read(go_r, 1)  # the parent has sent SIGTERM by now
            reset()
            os._exit(0)  # reached only when the signal was lost
        os.kill(pid, signal.SIGTERM)
        os.write(go_w, b"x")
        return os.waitpid(pid, 0)[1]
    finally:
        signal.signal(signal.SIGTERM, previous)
        os.close(go_r)
        os.close(go_w)


def test_a_sigterm_before_the_reset_stops_the_child_once_it_resets():
    def held():
        pid, before = fork_holding_stop_signals()
        return pid, lambda: release_in_child(before)

    status = _forked_child_stopped_early(held)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM


def test_without_holding_the_parents_handler_would_swallow_it():
    # The failure the module prevents, shown on a plain fork: the child runs the parent's handler and exits 0.
    def plain():
        pid = os.fork()
        return pid, lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL)

    status = _forked_child_stopped_early(plain)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_the_parent_keeps_its_own_mask():
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    pid, _ = fork_holding_stop_signals()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
