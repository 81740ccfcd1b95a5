#!/usr/bin/env python3
"""Node loss on the rig (issue 11, part 4).

usage: nodeloss.py --cut NODE --ranks-per-node N --timeout-ms T -- PROGRAM ARGS...

Runs PROGRAM (cluster_fault nodeloss) under `srun --mpi=pmix` on both nodes,
with the heartbeat at T ms (period T/10). Once every rank printed "ready", the
node NODE is lost: its link goes down and its tasks stop (nothing of them
can reach the other node; they are SIGKILLed once the link is back). Every
rank of the other node must then have:
  * printed "detected" (it knew of a failure) within 2*T ms of the cut,
  * printed "failed" (its allreduce failed with a ULFM error),
  * printed "shrunk ... size=N sum=N" (a shrink to the other node's ranks).
Then the link comes back, so that Slurm hears of the dead tasks, and srun
must exit with 137: the lost node's tasks (the keepers Slurm started) died
of SIGKILL with it, and under Slurm 22.05 a task killed by a signal decides
srun's status (src/srun/launch.c, _task_finish). No task may have exited with
a nonzero code ("Exited with exit code" on stderr), nor the step have been
cancelled. The link is restored whatever happens. Runs where srun reaches
the rig's controller (with_rig.sh).
"""
import argparse
import os
import re
import selectors
import signal
import subprocess
import sys
import time


def ip_link(node, state):
    subprocess.run(["ip", "-n", node, "link", "set", "rig0", state], check=True)


def signal_tasks(node, prog, sig):
    """Sends sig to the job's processes in NODE's namespace (not the Slurm
    daemons): the ranks and their keepers (runtime/task_keeper.hpp), the
    tasks Slurm started. Returns the number of ranks."""
    out = subprocess.run(["ip", "netns", "pids", node], capture_output=True, text=True).stdout
    name = os.path.basename(prog)[:15]
    n = 0
    for pid in out.split():
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            if comm in (name, "ftmpi-keeper"):
                os.kill(int(pid), sig)
                n += comm == name
        except OSError:
            pass
    return n


def lose_node(node, prog):
    """NODE is lost: its link goes down and its tasks freeze (SIGSTOP), so
    that nothing of them reaches the other node. Returns the number of ranks.
    They are SIGKILLed by restore_node, once the link is back: a task killed
    while the link is down makes its slurmstepd report the exit at once, which
    fails ("Network is unreachable") and is never retried, and srun then
    waits for it for ever (seen on the rig: not what a lost node does, whose
    step Slurm ends when it declares the node down)."""
    # Frozen first: no task of the node acts once the cut begins (an exit
    # between the two steps would be reported over a link that is down).
    n = signal_tasks(node, prog, signal.SIGSTOP)
    ip_link(node, "down")
    return n


def restore_node(node, prog):
    """The link comes back and the lost node's tasks die (SIGKILL)."""
    ip_link(node, "up")
    signal_tasks(node, prog, signal.SIGKILL)


errors = []  # srun's stderr lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cut", required=True)
    ap.add_argument("--ranks-per-node", type=int, default=2)
    ap.add_argument("--timeout-ms", type=int, default=500)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    n = a.ranks_per_node
    env = dict(os.environ, FTMPI_FT_TIMEOUT_MS=str(a.timeout_ms),
               FTMPI_FT_PERIOD_MS=str(max(1, a.timeout_ms // 10)))
    srun = ["srun", "--mpi=pmix", "-N", "2", f"--ntasks-per-node={n}", "--kill-on-bad-exit=0"] + cmd
    print("nodeloss: running", " ".join(srun), flush=True)
    proc = subprocess.Popen(srun, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    lines, partial = [], {"out": b"", "err": b""}
    errors.clear()
    problems = []

    def pump(until, done):
        """Reads output until done() or the deadline; returns done()."""
        while not done():
            left = until - time.monotonic()
            if left <= 0 or not sel.get_map():
                return done()
            for key, _ in sel.select(timeout=left):
                data = os.read(key.fileobj.fileno(), 65536)
                if not data:
                    sel.unregister(key.fileobj)
                    continue
                buf = partial[key.data] + data
                *whole, partial[key.data] = buf.split(b"\n")
                for l in whole:
                    text = l.decode(errors="replace")
                    print(("" if key.data == "out" else "stderr: ") + text, flush=True)
                    (lines if key.data == "out" else errors).append(text)
        return True

    def matching(rx):
        return [m for m in (re.match(rx, l) for l in lines) if m]

    cut_at = None
    try:
        if not pump(time.monotonic() + 30, lambda: len(matching(r"ready (\d+) (\S+)")) == 2 * n):
            problems.append("not every rank got ready within 30 s")
            return finish(proc, problems)
        node_of = {int(m[1]): m[2] for m in matching(r"ready (\d+) (\S+)")}
        survivors = sorted(r for r, node in node_of.items() if node != a.cut)
        if len(survivors) != n:
            problems.append(f"ranks per node: {node_of}")
            return finish(proc, problems)
        cut_at = time.monotonic()
        # The node is lost: nothing of its tasks can reach the other node.
        killed = lose_node(a.cut, cmd[0])
        print(f"nodeloss: {a.cut} cut off at t={cut_at:.6f}, {killed} tasks stopped there; "
              f"survivors {survivors}", flush=True)
        if killed != n:
            problems.append(f"killed {killed} tasks on {a.cut}, expected {n}")

        def survivors_shrunk():
            return {int(m[1]) for m in matching(r"shrunk (\d+) ")} >= set(survivors)
        if not pump(time.monotonic() + 20, survivors_shrunk):
            problems.append("survivors did not all shrink within 20 s of the cut")
        limit = 2 * a.timeout_ms / 1000
        for m in matching(r"detected (\d+) t=([\d.]+)"):
            r, dt = int(m[1]), float(m[2]) - cut_at
            if r in survivors:
                print(f"nodeloss: rank {r} detected the loss after {dt * 1000:.0f} ms", flush=True)
                if dt > limit:
                    problems.append(f"rank {r} detected after {dt:.3f} s > {limit:.3f} s")
        for m in matching(r"failed (\d+) t=([\d.]+)"):
            if int(m[1]) in survivors:
                print(f"nodeloss: rank {m[1]}'s allreduce failed after {(float(m[2]) - cut_at) * 1000:.0f} ms",
                      flush=True)
        for m in matching(r"shrunk (\d+) size=(\d+) sum=(\d+) t=([\d.]+)"):
            r, size, total, t = int(m[1]), int(m[2]), int(m[3]), float(m[4])
            if r in survivors:
                print(f"nodeloss: rank {r} shrunk after {(t - cut_at) * 1000:.0f} ms", flush=True)
                if size != n or total != n:
                    problems.append(f"rank {r} shrunk to size {size} (sum {total}), expected {n}")
    finally:
        if cut_at is not None:
            restore_node(a.cut, cmd[0])
    return finish(proc, problems, pump)


def finish(proc, problems, pump=None):
    deadline = time.monotonic() + 40
    if pump:
        pump(deadline, lambda: proc.poll() is not None)
    try:
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        problems.append("srun did not exit within 40 s")
        proc.kill()
        proc.wait()
    print(f"nodeloss: srun exited with {proc.returncode}", flush=True)
    if proc.returncode != 137 and not problems:
        problems.append(f"srun exit code {proc.returncode}, expected 137 (tasks killed by SIGKILL)")
    bad = [l for l in errors if re.search(r"Exited with exit code|CANCELLED|_errhandler|CHECK FAILED", l)]
    if bad:
        problems.append("srun/ranks reported: " + " | ".join(bad))
    for p in problems:
        print("FAIL:", p, flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
