"""checker.supervisor on its own: jobs in forked children, their results in the jobs' order,
their status messages, a child killed or failing, and the memory cap."""

from __future__ import annotations

import os
import signal
import time

from checker import supervisor


def work(job, say):
    if job == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if job == "raise":
        raise ValueError("no")
    if job == "grow":
        held = b"x" * (300 << 20)
        time.sleep(5)
        return len(held)
    say({"job": job})
    time.sleep(0.3)  # long enough for a status to be seen
    return job * 2


def test_results_in_order_and_why_the_others_have_none():
    seen: list[object] = []

    def tick(running):
        seen.extend(r.status for r in running if r.status)

    finished = supervisor.run(work, [1, "die", 2, "raise", 3], slots=2, on_tick=tick)
    assert finished.interrupted is None
    by_index = {e.index: e for e in finished.ended}
    assert [by_index[i].result for i in (0, 2, 4)] == [2, 4, 6]
    assert by_index[1].lost == "killed (signal 9)"
    assert by_index[3].lost == "mc failed: ValueError: no (a bug in mc)"
    assert {"job": 1} in seen or {"job": 2} in seen or {"job": 3} in seen


def test_over_the_memory_cap_the_largest_child_is_killed():
    finished = supervisor.run(work, ["grow", 1], slots=2, memory=200 << 20)
    grown, small = finished.ended
    assert grown.out_of_memory and grown.lost.startswith("out of memory (")
    assert "went over --memory 200 MiB" in grown.lost
    assert small.result == 2
