#!/usr/bin/env python3
"""ftmpirun --timeline FILE: a 4-rank job whose last rank is killed (tevents.c)
leaves one trace in Chrome's JSON format, valid JSON once ftmpirun closed it,
where every rank has its track and every survivor shows the failure, the
revoke, the shrink (a span) and the agreement (a span) in causal order, and
the launcher's track shows the rank's death.

usage: timeline.py FTMPIRUN TEVENTS
"""
import json
import os
import subprocess
import sys
import tempfile


def causal_order(trace):
    """What tevents.c's survivors did, in an order the clock (one node's)
    must show: rank 0 finds the failure, then revokes; each survivor's
    revoke notice comes after rank 0's revoke; each survivor's shrink ends
    after it knew of the failure, and its agreement starts after its shrink
    ended (its program calls them one after the other)."""
    def one(rank, cat):
        es = [e for e in trace if e.get("pid") == rank and e.get("cat") == cat]
        if len(es) != 1:
            sys.exit(f"timeline: rank {rank}: {len(es)} events {cat}")
        return es[0]

    def failure(rank):
        return next(e for e in trace if e.get("pid") == rank and e.get("args", {}).get("process") == 3)

    revoke = one(0, "ftmpi_comm_revoked")
    if revoke["ts"] < failure(0)["ts"]:
        sys.exit("timeline: rank 0 revoked before it knew of the failure")
    for rank in range(3):
        got, shrink, agree = one(rank, "ftmpi_comm_revoked"), one(rank, "ftmpi_shrink_done"), one(rank, "ftmpi_agree_decided")
        if got["ts"] < revoke["ts"]:
            sys.exit(f"timeline: rank {rank} got the revoke before rank 0 revoked")
        if shrink["ts"] + shrink["dur"] < failure(rank)["ts"]:
            sys.exit(f"timeline: rank {rank}: the shrink ended before the failure was known")
        if agree["ts"] < shrink["ts"] + shrink["dur"]:
            sys.exit(f"timeline: rank {rank}: the agreement started before the shrink ended")


def main(ftmpirun, program):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        run = subprocess.run([ftmpirun, "--timeline", path, "-n", "4", program], timeout=90)
        if run.returncode != 0:
            sys.exit(f"timeline: ftmpirun exited {run.returncode}")
        with open(path) as f:
            trace = json.load(f)  # closed by ftmpirun: plain JSON
    names = {e["pid"]: e["args"]["name"] for e in trace if e.get("ph") == "M" and e["name"] == "process_name"}
    for rank in range(4):
        if names.get(rank) != f"rank {rank} (process {rank})":
            sys.exit(f"timeline: no track for rank {rank}: {names}")
    for rank in range(3):
        mine = [e for e in trace if e.get("pid") == rank and e.get("ph") != "M"]
        cats = {e["cat"] for e in mine}
        failure = [e for e in mine if e["cat"] in ("ftmpi_failure_detected", "ftmpi_failure_learned")
                   and e["args"]["process"] == 3]
        if len(failure) != 1 or "process 3 failed" not in failure[0]["name"]:
            sys.exit(f"timeline: rank {rank}: failure events {failure}")
        for cat in ("ftmpi_comm_revoked", "ftmpi_shrink_done", "ftmpi_agree_decided"):
            if cat not in cats:
                sys.exit(f"timeline: rank {rank}: no {cat} in {sorted(cats)}")
        for e in mine:
            if e["cat"] in ("ftmpi_shrink_done", "ftmpi_agree_decided") and (e["ph"] != "X" or e["dur"] <= 0):
                sys.exit(f"timeline: rank {rank}: {e} is not a span")
            if e["cat"] == "ftmpi_shrink_done" and e["args"]["new_size"] != 3:
                sys.exit(f"timeline: rank {rank}: {e}")
    causal_order(trace)
    deaths = [e for e in trace if e.get("cat") == "launcher" and "rank 3 (pid" in e["name"]]
    if len(deaths) != 1 or "killed by signal 9" not in deaths[0]["name"]:
        sys.exit(f"timeline: the launcher's track: {deaths}")
    events = sum(1 for e in trace if e.get("ph") != "M")
    print(f"timeline: {events} events of 3 survivors and 4 tracks")


if __name__ == "__main__":
    main(*sys.argv[1:])
