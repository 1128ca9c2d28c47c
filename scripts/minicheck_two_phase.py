"""TwoPhase.tla for minicheck 0.4.0 (the benchmark's peer), state for state as
specs/examples/two_phase.py: run by scripts/bench.py in its own environment, never imported
by mc. Prints {"distinct", "seconds", "rss_kib"} as JSON.

usage: python scripts/minicheck_two_phase.py RM
"""

import json
import resource
import sys
import time

from minicheck import Protocol, check_safety

RM = int(sys.argv[1])
COMMIT, ABORT = ("Commit",), ("Abort",)
STATES = {"working", "prepared", "committed", "aborted"}


def put(t, i, v):
    return t[:i] + (v,) + t[i + 1 :]


def transitions(s):
    rm_state, tm_state, tm_prepared, msgs = s
    out = []
    for r in range(RM):  # TMRcvPrepared
        if tm_state == "init" and ("Prepared", r) in msgs:
            out.append(("TMRcvPrepared", (rm_state, tm_state, tm_prepared | {r}, msgs)))
    if tm_state == "init" and len(tm_prepared) == RM:
        out.append(("TMCommit", (rm_state, "done", tm_prepared, msgs | {COMMIT})))
    if tm_state == "init":
        out.append(("TMAbort", (rm_state, "done", tm_prepared, msgs | {ABORT})))
    for r in range(RM):
        if rm_state[r] == "working":
            prepared = put(rm_state, r, "prepared")
            out.append(("RMPrepare", (prepared, tm_state, tm_prepared, msgs | {("Prepared", r)})))
    for r in range(RM):
        if rm_state[r] == "working":
            out.append(("RMChooseToAbort", (put(rm_state, r, "aborted"), *s[1:])))
    for r in range(RM):
        if COMMIT in msgs:
            out.append(("RMRcvCommitMsg", (put(rm_state, r, "committed"), *s[1:])))
    for r in range(RM):
        if ABORT in msgs:
            out.append(("RMRcvAbortMsg", (put(rm_state, r, "aborted"), *s[1:])))
    return out


def type_ok(d):
    return (
        all(x in STATES for x in d["rmState"])
        and d["tmState"] in ("init", "done")
        and d["tmPrepared"] <= set(range(RM))
        and all(m in (COMMIT, ABORT) or m[0] == "Prepared" for m in d["msgs"])
    )


def consistent(d):
    return not ("aborted" in d["rmState"] and "committed" in d["rmState"])


model = Protocol(
    name="TwoPhase",
    candidate=False,
    fields=("rmState", "tmState", "tmPrepared", "msgs"),
    initial=(("working",) * RM, "init", frozenset(), frozenset()),
    transitions=transitions,
    invariants={"TPTypeOK": type_ok, "TCConsistent": consistent},
)
start = time.perf_counter()
result = check_safety(model, max_states=10**8)
seconds = time.perf_counter() - start
assert result["exhaustive"] and all(p["holds"] for p in result["properties"].values())
print(json.dumps({
    "distinct": result["reachable_states"],
    "seconds": seconds,
    "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
