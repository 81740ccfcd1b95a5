#!/usr/bin/env python3
"""What a job leaves behind when ftmpirun is killed, or when its ranks leave
children running (issue 18, "Leaks and leftovers").

usage: job_cleanup.py FTMPIRUN HELD_JOB kill|timeout|leftover [--runs N]

Every case runs `ftmpirun -n 4 HELD_JOB ...` (tests/launcher/held_job.c):
each rank forks a child that pauses forever, then prints
"ready rank R pid P child C". The script reads those lines from the pipe
(the only synchronization: no sleeps), so it knows every rank and child.

  kill      (N runs) once all 4 ranks are ready, SIGKILLs ftmpirun itself.
  timeout   (N runs) `timeout -s KILL T ftmpirun ...`: timeout SIGKILLs
            ftmpirun and its own process group T seconds in.
            Both then wait, polling with a 10 s deadline, until no rank, no
            rank's child and no job guard (ftmpirun's "ftmpirun-guard"
            child) is left, and /dev/shm holds no ftmpi-<rank pid>-* region.
  leftover  the ranks finalize and exit 0, their children still running:
            right after ftmpirun returns (0, with "killed 4 leftover
            processes of the job" on stderr) no child is left.
Exit 0 when every run is clean; otherwise one "FAIL: ..." line per failed
run (what was left), after killing what was left and removing its regions.
"""
import argparse
import glob
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time

NP = 4
READY = re.compile(r"^ready rank (\d+) pid (\d+) child (\d+)$", re.M)
READY_DEADLINE_S = 30.0   # for the job to start (a loaded machine)
CLEAN_DEADLINE_S = 10.0   # for everything to be gone after the kill
TIMEOUT_S = 5             # timeout's T in the timeout case
POLL_S = 0.02


class Fail(Exception):
    pass


def proc_stat(pid):
    """(state, ppid, comm) of `pid`, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
    except OSError:
        return None
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), comm


def alive(pid):
    """Whether `pid` is a process that has not exited (a zombie has)."""
    st = proc_stat(pid)
    return st is not None and st[0] != "Z"


def children_named(parent, comm):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st and st[1] == parent and st[2] == comm and st[0] != "Z":
                out.append(int(name))
    return out


def regions_of(pid):
    return glob.glob(f"/dev/shm/ftmpi-{pid}-*")


def read_ready(proc, deadline):
    """Reads proc's stdout until NP ready lines; returns {rank: (pid, child)}."""
    text = ""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    fd = proc.stdout.fileno()
    while len(READY.findall(text)) < NP:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Fail(f"only {len(READY.findall(text))} of {NP} ranks ready after "
                       f"{READY_DEADLINE_S} s; stdout: {text!r}")
        if not sel.select(timeout=left):
            continue
        data = os.read(fd, 65536)
        if not data:
            raise Fail(f"stdout closed with {len(READY.findall(text))} of {NP} ranks ready "
                       f"(exit code {proc.wait()}); stdout: {text!r}")
        text += data.decode(errors="replace")
    sel.close()
    return {int(r): (int(p), int(c)) for r, p, c in READY.findall(text)}


def leftovers(ranks, guard):
    """What of the job is still there, one string per thing."""
    left = []
    for r, (pid, child) in sorted(ranks.items()):
        if alive(pid):
            left.append(f"rank {r} (pid {pid})")
        if alive(child):
            left.append(f"rank {r}'s child (pid {child})")
        left += regions_of(pid)
    if guard and alive(guard):
        left.append(f"the job guard (pid {guard})")
    return left


def kill_quietly(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def clean_after_failure(launcher, ranks, guard):
    """Kills what a failed run left and removes its ranks' regions."""
    kill_quietly([launcher] + [p for pc in ranks.values() for p in pc] + ([guard] if guard else []))
    for pid, _ in ranks.values():
        for path in regions_of(pid):
            try:
                os.unlink(path)
            except OSError:
                pass


def one_killed_job(ftmpirun, prog, how, env, errlog):
    """One run of the kill or timeout case; returns a one-line report."""
    cmd = [ftmpirun, "-n", str(NP), prog, "hold"]
    if how == "timeout":
        cmd = ["timeout", "-s", "KILL", str(TIMEOUT_S)] + cmd
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=errlog, start_new_session=True)
    ranks, guard = {}, None
    try:
        ranks = read_ready(proc, start + READY_DEADLINE_S)
        ready_s = time.monotonic() - start
        launcher = proc.pid
        if how == "timeout":
            found = children_named(proc.pid, "ftmpirun")
            if len(found) != 1:
                raise Fail(f"ftmpirun under timeout not found (children named ftmpirun: {found})")
            launcher = found[0]
        guards = children_named(launcher, "ftmpirun-guard")
        if len(guards) != 1:
            raise Fail(f"ftmpirun (pid {launcher}) has {len(guards)} ftmpirun-guard children")
        guard = guards[0]
        for r, (pid, _) in sorted(ranks.items()):
            if not regions_of(pid):
                raise Fail(f"rank {r} (pid {pid}) has no /dev/shm/ftmpi-{pid}-* region: "
                           "this run would prove nothing")
        if how == "kill":
            os.kill(launcher, signal.SIGKILL)
            code = proc.wait(timeout=CLEAN_DEADLINE_S)
            if code != -signal.SIGKILL:
                raise Fail(f"ftmpirun exited with {code} before it was killed")
        else:
            # The job is under way (all ranks ready, TIMEOUT_S is ample for
            # that); timeout SIGKILLs ftmpirun, then its own group, itself
            # included: -9.
            code = proc.wait(timeout=TIMEOUT_S + CLEAN_DEADLINE_S)
            if code not in (-signal.SIGKILL, 128 + signal.SIGKILL):
                raise Fail(f"timeout exited with {code}, expected to be killed by SIGKILL")
        killed_at = time.monotonic()
        deadline = killed_at + CLEAN_DEADLINE_S
        while leftovers(ranks, guard) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        left = leftovers(ranks, guard)
        if left:
            raise Fail(f"{CLEAN_DEADLINE_S} s after ftmpirun was killed, still there: " + ", ".join(left))
        return f"ready after {ready_s:.2f} s, all gone {time.monotonic() - killed_at:.3f} s after the kill"
    except (Fail, subprocess.TimeoutExpired):
        clean_after_failure(proc.pid, ranks, guard)
        raise
    finally:
        if proc.poll() is None:
            kill_quietly([proc.pid])
        proc.wait()
        proc.stdout.close()


def leftover_job(ftmpirun, prog, env):
    start = time.monotonic()
    proc = subprocess.run([ftmpirun, "-n", str(NP), prog, "daemon"], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=READY_DEADLINE_S)
    elapsed = time.monotonic() - start
    ranks = {int(r): (int(p), int(c)) for r, p, c in READY.findall(proc.stdout)}
    problems = []
    if len(ranks) != NP:
        problems.append(f"{len(ranks)} of {NP} ranks ready; stdout: {proc.stdout!r}")
    if proc.returncode != 0:
        problems.append(f"ftmpirun exited with {proc.returncode}")
    want = f"ftmpirun: killed {NP} leftover processes of the job"
    if want not in proc.stderr.splitlines():
        problems.append(f"stderr lacks {want!r}")
    left = leftovers(ranks, None)
    if left:
        problems.append("still there after ftmpirun returned: " + ", ".join(left))
        clean_after_failure(proc.pid, ranks, None)
    if problems:
        raise Fail("; ".join(problems) + f"; stderr: {proc.stderr!r}")
    return f"ftmpirun returned after {elapsed:.2f} s, nothing left"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ftmpirun")
    ap.add_argument("prog")
    ap.add_argument("case", choices=["kill", "timeout", "leftover"])
    ap.add_argument("--runs", type=int, default=1)
    a = ap.parse_args()
    # The case with /dev/shm regions for the whole job: libfabric's shm
    # provider (16 MiB per rank). ftmpi's own shared memory unlinks each
    # pair's segment once both ends have mapped it, so it leaves none.
    env = dict(os.environ, FTMPI_PROVIDER="shm", FTMPI_SHM_FASTPATH="0")
    failures = 0
    t0 = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as errlog:
        for run in range(1, a.runs + 1):
            errlog.seek(0)
            errlog.truncate()
            try:
                if a.case == "leftover":
                    report = leftover_job(a.ftmpirun, a.prog, env)
                else:
                    report = one_killed_job(a.ftmpirun, a.prog, a.case, env, errlog)
                print(f"run {run}: {report}", flush=True)
            except (Fail, subprocess.TimeoutExpired) as e:
                failures += 1
                errlog.seek(0)
                print(f"FAIL: run {run}: {e}; stderr: {errlog.read()!r}", flush=True)
    print(f"{a.runs - failures} of {a.runs} runs clean in {time.monotonic() - t0:.1f} s", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
