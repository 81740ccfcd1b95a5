#!/usr/bin/env python3
"""The failure detector's false-suspicion campaign: many long runs of
tests/integration/ft_load.c (4 ranks on the machine's cores, ftmpirun's
default placement, MPI_THREAD_MULTIPLE, compute, one-sided and collective
calls, a second thread in MPI), counting every suspicion and the worst
heartbeat gap.

usage:
  ft_load_campaign.py --ftmpirun PATH --program PATH [--runs 20]
                      [--seconds 120] [--np 4] [--hogs 1] [--stop]
                      [--lock CMD] [--log FILE]
                      [--stall cpu0|all --stall-seconds S --stall-after S]

Each run is one `ftmpirun -n NP PROGRAM SECONDS [stop] hogs=N` under a
deadline (SECONDS + 90 s), in its own session (tests/harness.py: the whole
group is killed at the deadline, orphans are found). With --lock (default:
`machine-lock` when it is on PATH; --lock '' for none) each run takes the
lock on its own, so that others can use the machine between runs: their
load only makes the campaign harsher.

A run passes when ftmpirun exits 0, the program printed its `ft_load:` line
with `failures 0` (and with --stop its `ft_load stop:` line), and no
detector logged a suspicion (`is failed: no heartbeat`, or a rank excluded).
A suspicion is any such line, or a rank killed while the load ran.

--stall (root only: real-time spinners, which starve every other process of
the CPU for that long) stalls CPU 0, or every CPU, for --stall-seconds,
--stall-after seconds into each run: a virtual CPU the host does not run, or
a machine loaded beyond reason. Without it the load is the program's and the
machine's.

Prints one line per run, then a summary:
  ft_load campaign: 20 runs of 120 s, 20 passed, suspicions 0,
  worst heartbeat gap 143 ms (median of the runs' worst 118 ms)
and exits 1 unless every run passed.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import run_command  # noqa: E402

SUSPICION = re.compile(r"is failed: no heartbeat|declared failed by the failure detector|"
                       r"its process ended \(liveness link reset\)")
SUMMARY = re.compile(r"^ft_load: (\d+) ranks, .* worst heartbeat gap (-?\d+) ms \(rank (\d+)\), failures (\d+)$", re.M)
STOPPED = re.compile(r"^ft_load stop: .*$", re.M)


def stall(cpus, seconds):
    """Real-time spinners on `cpus` for `seconds` (started, not waited for)."""
    spin = ["sh", "-c", "while :; do :; done"]
    return [subprocess.Popen(["timeout", str(seconds), "chrt", "-f", "50", "taskset", "-c", str(c)] + spin,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in cpus]


def one_run(a):
    """One job (inside the lock): prints its result as one JSON line."""
    cmd = [a.ftmpirun, "-n", str(a.np), a.program, str(a.seconds), f"hogs={a.hogs}"] + (["stop"] if a.stop else [])
    spinners = []
    if a.stall:
        # Started from a helper thread of sorts: a timer in this process.
        cpus = [0] if a.stall == "cpu0" else list(range(os.cpu_count() or 1))

        def arm(signum, frame):
            spinners.extend(stall(cpus, a.stall_seconds))
        signal.signal(signal.SIGALRM, arm)
        signal.setitimer(signal.ITIMER_REAL, a.stall_after)
    start = time.monotonic()
    r = run_command(cmd, dict(os.environ), a.seconds + 90)
    signal.setitimer(signal.ITIMER_REAL, 0)
    for s in spinners:
        s.wait()
    out, err = r.out, r.err
    m = SUMMARY.search(out)
    suspicions = SUSPICION.findall(err)
    problems = []
    if r.code is None:
        problems.append("TIMEOUT")
    elif r.code != 0:
        problems.append(f"exit {r.code}")
    if not m:
        problems.append("no ft_load line")
    elif int(m.group(4)) != 0:
        problems.append(f"{m.group(4)} failure(s) known after the load")
    if a.stop and not STOPPED.search(out):
        problems.append("no ft_load stop line")
    if suspicions and not a.stop:
        problems.append("suspicion")
    # With --stop exactly one rank is declared failed, after the load.
    if a.stop and len(suspicions) > 1:
        problems.append(f"{len(suspicions)} suspicions")
    if r.orphans:
        problems.append("orphans")
    print(json.dumps({
        "seconds": round(time.monotonic() - start, 1),
        "gap_ms": int(m.group(2)) if m else None,
        "gap_rank": int(m.group(3)) if m else None,
        "suspicions": len(suspicions) - (1 if a.stop and STOPPED.search(out) else 0),
        "stop_line": (STOPPED.search(out).group(0) if STOPPED.search(out) else None),
        "problems": problems,
        "stderr_tail": err.strip().splitlines()[-8:] if problems else [],
    }))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ftmpirun", required=True)
    p.add_argument("--program", required=True, help="the built tests/integration/ft_load.c (itest_ft_load)")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--seconds", type=float, default=120)
    p.add_argument("--np", type=int, default=4)
    p.add_argument("--hogs", type=int, default=1)
    p.add_argument("--stop", action="store_true", help="end each run with the SIGSTOP check")
    p.add_argument("--lock", default=None, help="command each run is prefixed with (default: machine-lock if found)")
    p.add_argument("--log", help="append each run's JSON line to this file")
    p.add_argument("--stall", choices=["cpu0", "all"])
    p.add_argument("--stall-seconds", type=float, default=1.5)
    p.add_argument("--stall-after", type=float, default=10)
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        return one_run(a)
    lock = a.lock if a.lock is not None else ("machine-lock" if shutil.which("machine-lock") else "")
    inner = [sys.executable, os.path.abspath(__file__), "--one", "--ftmpirun", a.ftmpirun, "--program", a.program,
             "--seconds", str(a.seconds), "--np", str(a.np), "--hogs", str(a.hogs),
             "--stall-seconds", str(a.stall_seconds), "--stall-after", str(a.stall_after)]
    inner += (["--stop"] if a.stop else []) + (["--stall", a.stall] if a.stall else [])
    results = []
    for i in range(a.runs):
        cmd = (lock.split() if lock else []) + inner
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        try:
            res = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            res = {"problems": [f"no result (exit {proc.returncode})"], "gap_ms": None, "suspicions": 0}
        res["run"] = i + 1
        results.append(res)
        print(f"run {i + 1}/{a.runs}: worst gap {res.get('gap_ms')} ms (rank {res.get('gap_rank')}), "
              f"suspicions {res.get('suspicions')}, {'ok' if not res['problems'] else ' '.join(res['problems'])}"
              + (f"; {res['stop_line']}" if res.get("stop_line") else ""), flush=True)
        for line in res.get("stderr_tail", []):
            print("    " + line)
        if a.log:
            with open(a.log, "a") as f:
                f.write(json.dumps(res) + "\n")
    gaps = sorted(r["gap_ms"] for r in results if r.get("gap_ms") is not None)
    passed = sum(1 for r in results if not r["problems"])
    suspicions = sum(r.get("suspicions") or 0 for r in results)
    median = gaps[len(gaps) // 2] if gaps else None
    print(f"ft_load campaign: {a.runs} runs of {a.seconds:g} s, {passed} passed, suspicions {suspicions}, "
          f"worst heartbeat gap {gaps[-1] if gaps else None} ms (median of the runs' worst {median} ms)")
    return 0 if passed == a.runs else 1


if __name__ == "__main__":
    sys.exit(main())
