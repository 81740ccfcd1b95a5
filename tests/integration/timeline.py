#!/usr/bin/env python3
"""ftmpirun --timeline FILE: a 4-rank job whose last rank is killed (tevents.c)
leaves one trace in Chrome's JSON format, valid JSON once ftmpirun closed it,
where every rank has its track and every survivor shows the failure, the
revoke, the shrink (a span) and the agreement (a span), and the launcher's
track shows the rank's death.

usage: timeline.py FTMPIRUN TEVENTS
"""
import json
import os
import subprocess
import sys
import tempfile


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
        if not all(e["ts"] + e["dur"] >= failure[0]["ts"] for e in mine if e["cat"] == "ftmpi_shrink_done"):
            sys.exit(f"timeline: rank {rank}: a shrink ends before the failure was known")
    deaths = [e for e in trace if e.get("cat") == "launcher" and "rank 3 (pid" in e["name"]]
    if len(deaths) != 1 or "killed by signal 9" not in deaths[0]["name"]:
        sys.exit(f"timeline: the launcher's track: {deaths}")
    events = sum(1 for e in trace if e.get("ph") != "M")
    print(f"timeline: {events} events of 3 survivors and 4 tracks")


if __name__ == "__main__":
    main(*sys.argv[1:])
