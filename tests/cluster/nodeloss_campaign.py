#!/usr/bin/env python3
"""The random-kill campaign's node-loss mode, on the emulated cluster.

usage: nodeloss_campaign.py --program STRESS [--trials N] [--seed S]
           [--features rma,io,threads] [--rounds R] [--timeout SECS]
           [--budget SECS] [--log FILE] [--replay TRIAL_SEED]
Run it where srun reaches the rig (tests/cluster/with_rig.sh).

Each trial runs tests/stress/stress.c under `srun --mpi=pmix` on both nodes
of the rig, with 2 to 4 ranks per node and, drawn from its own seed, which
of --features its rounds also run (each with probability 1/2), which node
is lost and at which round, and sometimes (3 in 10) one more victim on the
other node, SIGKILLed at the start of a round (-k). When the first rank
reports that round's agreement, the node is lost (every rank waits after
that agreement until it is: stress -p): its link goes down and
its tasks stop, so that nothing of them reaches the other node, which must
find them by the heartbeat (--ft-timeout-ms, by default the library's
1000). Once the other node's ranks have finished (or 30 s passed) the link
comes back and the lost node's tasks are SIGKILLed, so that Slurm hears of
their deaths (tests/cluster/nodeloss.py: lose_node).

A live rank that the heartbeat takes for failed (descheduled too long: the
rig's nodes share this machine's cores) leaves the job, and the others go
on without it; such ranks are counted per trial (false_failures), not
failures of the trial. A trial passes when no rank printed WRONG or BADCLASS, every agreement of
one (generation, round) is the same at every rank that printed it, every
rank of the surviving node that was neither the extra victim nor taken
for failed printed DONE with
one generation and size, srun exited with 137 (its tasks killed by
SIGKILL decide its status under Slurm 22.05) and reported no task that
exited with an error nor a cancelled step, and no task of the job is left
on either node. A hang is a trial that missed its deadline, unless every
task had ended by then and the lost node's slurmstepd said it could not
send a task's exit report (the rig's Slurm: a rank that ended on its own
as the link went down, and srun waits for its report for ever), which is
counted apart ("rig"). `--replay SEED`
runs one trial again, with the same choices.
"""
import argparse
import os
import random
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "stress"))
from nodeloss import lose_node, restore_node  # noqa: E402
from campaign import FEATURES, output_problems, run_trials, survivor_problems, trial_seeds  # noqa: E402

NODES = ["ftn1", "ftn2"]
SRUN_REJECTS = re.compile(r"Exited with exit code|CANCELLED|_errhandler|CHECK FAILED")


class Job:
    """A running srun whose output is read as it comes."""

    def __init__(self, cmd, env):
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ, "out")
        self.sel.register(self.proc.stderr, selectors.EVENT_READ, "err")
        self.text = {"out": "", "err": ""}

    def pump(self, until, done):
        """Reads output until done() or the deadline; returns done()."""
        while not done():
            left = until - time.monotonic()
            if left <= 0 or not self.sel.get_map():
                return done()
            for key, _ in self.sel.select(timeout=left):
                data = os.read(key.fileobj.fileno(), 65536)
                if not data:
                    self.sel.unregister(key.fileobj)
                    continue
                self.text[key.data] += data.decode(errors="replace")
        return True

    def finish(self, until, at_hang=None):
        """srun's exit code, or None when it had to be killed at the deadline
        (after at_hang(), if given)."""
        self.pump(until, lambda: self.proc.poll() is not None)
        try:
            return self.proc.wait(timeout=max(0.1, until - time.monotonic()))
        except subprocess.TimeoutExpired:
            if at_hang:
                at_hang()
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            return None


def leftovers(prog):
    """Tasks of the job still alive in the nodes' namespaces."""
    name = os.path.basename(prog)[:15]
    left = []
    for node in NODES:
        out = subprocess.run(["ip", "netns", "pids", node], capture_output=True, text=True).stdout
        for pid in out.split():
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() in (name, "ftmpi-keeper"):
                        left.append(f"{node}:{pid}")
            except OSError:
                pass
    return left


# A rank's own words for its end under srun: its keeper saw it killed
# (runtime/task_keeper.hpp), or the detector of another rank took it for
# failed and it left (ft/detector.cpp).
GONE = re.compile(r"^ftmpi\[(\d+)\] (?:warning: this rank \(pid \d+\) died of signal"
                  r"|error: this process was declared failed by the failure detector)", re.M)


LOST_EXIT = re.compile(r"slurmstepd-\S+: error: Failed to send MESSAGE_TASK_EXIT")


def gone(err):
    return {int(m[1]) for m in GONE.finditer(err)}


def stuck_kill_steps():
    """The `srun --overlap` steps that ranks start to kill a rank of another
    node (runtime/pmix_client_kill.cpp, kill_by_pid) and that are still running:
    one sent toward the lost node while its link was down never completes on
    the rig (its launch message is lost and not sent again, as slurmstepd's
    exit reports are), where Slurm would end it by declaring the node down."""
    found = []
    for node in NODES:
        out = subprocess.run(["ip", "netns", "pids", node], capture_output=True, text=True).stdout
        for pid in out.split():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv and os.path.basename(argv[0]) == b"srun" and b"--overlap" in argv:
                found.append(int(pid))
    return found


def task_stacks(prog):
    """Every live task's threads' stacks (gdb), for a hang."""
    text = []
    for item in leftovers(prog):
        pid = item.split(":")[1]
        r = subprocess.run(["gdb", "-p", pid, "-batch", "-ex", "thread apply all bt 14"], capture_output=True,
                           text=True, timeout=60)
        text.append(f"---- {item} ----\n" + "\n".join(l for l in r.stdout.splitlines() if l.startswith(("#", "Thread"))))
    return "\n".join(text)


def release_allocations():
    """After a hang: cancels what srun left allocated, so that the next trial
    is not queued behind it; waits (with a deadline) until the queue is empty."""
    subprocess.run(["scancel", "--full", "--signal=KILL", "--user=root"], capture_output=True)
    subprocess.run(["scancel", "--user=root"], capture_output=True)
    until = time.monotonic() + 30
    while time.monotonic() < until:
        q = subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout.strip()
        if not q:
            return
        time.sleep(0.5)  # polling Slurm's queue, with a deadline


def plan(a, seed):
    rnd = random.Random(seed)
    per_node = rnd.randint(2, 4)
    features = ",".join(f for f in a.features if rnd.random() < 0.5)
    cut = rnd.choice(NODES)
    # Early enough that the job is still running when the cut takes effect
    # (a round takes 50 to 200 ms here): a quarter of the rounds at most.
    cut_round = rnd.randrange(0, max(1, a.rounds // 4))
    survivors = list(range(per_node)) if cut == "ftn2" else list(range(per_node, 2 * per_node))
    extra = []
    if per_node >= 3 and rnd.random() < 0.3:
        victim = rnd.choice(survivors)
        extra = [victim, rnd.randrange(0, a.rounds - 2)]
    return per_node, features, cut, cut_round, survivors, extra


def trial(a, seed):
    per_node, features, cut, cut_round, survivors, extra = plan(a, seed)
    workdir = tempfile.mkdtemp(prefix="ftmpi-nodeloss.")
    # The ranks wait after the cut round's agreement until the node is lost
    # (the file): a job of fast rounds would otherwise finish first.
    cut_file = os.path.join(workdir, "cut")
    cmd = ["srun", "--mpi=pmix", "-N", "2", f"--ntasks-per-node={per_node}", "--kill-on-bad-exit=0", a.program,
           "-r", str(a.rounds), "-p", f"{cut_round}:{cut_file}"]
    if features:
        cmd += ["-f", features, "-d", workdir]
    if extra:
        cmd += ["-k", f"{extra[0]}:{extra[1]}:kill"]
    env = dict(os.environ, FTMPI_FT_TIMEOUT_MS=str(a.ft_timeout_ms), FTMPI_FT_PERIOD_MS=str(max(1, a.ft_timeout_ms // 10)))
    start = time.monotonic()
    deadline = start + a.timeout
    job = Job(cmd, env)
    problems = []
    cut_done = False
    killed = None
    try:
        reached = job.pump(deadline, lambda: re.search(rf"^AGREE \d+ \d+ {cut_round} ", job.text["out"], re.M))
        if not reached:
            problems.append(f"round {cut_round} never agreed" + (" (TIMEOUT)" if time.monotonic() >= deadline else ""))
        else:
            cut_done = True
            killed = lose_node(cut, a.program)
            open(cut_file, "w").close()
            alive = [r for r in survivors if not extra or r != extra[0]]

            def finished():
                done = {int(m[1]) for m in re.finditer(r"^DONE (\d+) ", job.text["out"], re.M)}
                return done | gone(job.text["err"]) >= set(alive)
            job.pump(min(deadline, time.monotonic() + 30), finished)
    finally:
        if cut_done:
            restore_node(cut, a.program)
    stacks, at_deadline = [], []

    def hung():
        at_deadline.extend(leftovers(a.program))
        if a.stacks:
            stacks.append(task_stacks(a.program))
    code = job.finish(deadline, hung)
    secs = time.monotonic() - start
    if code is None:
        release_allocations()
    shutil.rmtree(workdir, ignore_errors=True)
    out, err = job.text["out"], job.text["err"]
    if code is None:
        problems.append("TIMEOUT (hang)")
    problems += output_problems(out)
    # A live rank the heartbeat took for failed (it was descheduled too long)
    # leaves the job or is killed: the others go on without it, consistently.
    # Not a wrong result, but counted and reported (false_failures): any rank
    # of the lost node that ended before the cut, and any rank of the other
    # node that ended without being the extra victim at its round (the extra
    # victim says DYING first; taken for failed before, it is one of these).
    ended_early = gone(err)
    dying = bool(extra) and re.search(rf"^DYING {extra[0]} ", out, re.M) is not None
    false_failures = sorted(r for r in ended_early if r not in survivors or not (dying and r == extra[0]))
    # Every task of the lost node was killed or had ended on its own (taken
    # for failed); one that was leaving just as the node went may be both.
    early = sum(r not in survivors for r in false_failures)
    if killed is not None and not killed <= per_node <= killed + early:
        problems.append(f"killed {killed} tasks on {cut}, expected {per_node} ({early} had ended on their own)")
    ended = [r for r in survivors if (extra and r == extra[0]) or r in false_failures]
    problems += survivor_problems(out, [r for r in survivors if r not in ended])
    sizes = {int(m[1]) for m in re.finditer(r"^DONE \d+ \d+ (\d+) ", out, re.M)}
    want = len(survivors) - sum(r in survivors for r in false_failures) - (1 if dying else 0)
    if sizes and sizes != {want}:
        problems.append(f"survivors ended with sizes {sorted(sizes)}, expected {want}")
    if code is not None and code != 137:
        problems.append(f"srun exited {code}, expected 137")
    # A rank that left because it was taken for failed exits 70 (srun says so).
    bad = [l for l in err.splitlines()
           if SRUN_REJECTS.search(l) and not (false_failures and "exit code 70" in l)]
    if bad:
        problems.append("srun/ranks reported: " + " | ".join(bad[:5]))
    left_deadline = time.monotonic() + 10
    while (left := leftovers(a.program)) and time.monotonic() < left_deadline:
        time.sleep(0.2)  # slurmstepd reaps its tasks a moment after srun ends: a poll with a deadline
    until = time.monotonic() + 5
    while (steps := stuck_kill_steps()) and time.monotonic() < until:
        time.sleep(0.2)  # a kill step toward a node whose link is back may still finish: a poll with a deadline
    for pid in steps:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if left:
        problems.append(f"tasks left: {left}")
        for item in left:
            try:
                os.kill(int(item.split(":")[1]), signal.SIGKILL)
            except OSError:
                pass
    rec = {"seed": seed, "np": 2 * per_node, "features": features, "cut": cut, "cut_round": cut_round,
           "extra": extra, "secs": round(secs, 2), "exit": code, "problems": problems,
           "false_failures": false_failures, "stuck_kill_steps": len(steps),
           "outcome": "hang" if code is None else ("ok" if not problems else "fail")}
    # The rig's Slurm, not the job: every task had ended by the deadline, and
    # the lost node's slurmstepd said it could not report one's exit (a task
    # that ended on its own as the link went down: taken for failed just
    # before); srun waits for that report for ever. Counted apart.
    if code is None and not at_deadline and LOST_EXIT.search(err) and problems == ["TIMEOUT (hang)"]:
        rec["outcome"] = "rig"
    if rec["outcome"] != "ok":
        rec["stdout"] = out[-4000:]
        rec["stderr"] = err[-8000:] + ("\n---- stacks at the deadline ----\n" + stacks[0] if stacks else "")
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--program", required=True)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--features", default="rma,io,threads")
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--budget", type=float, default=None, help="stop starting trials after this many seconds")
    ap.add_argument("--log", default=None, help="one JSON line per trial")
    ap.add_argument("--replay", type=int, default=None)
    ap.add_argument("--stacks", action="store_true", help="at a hang, print every live task's stack (gdb)")
    ap.add_argument("--ft-timeout-ms", type=int, default=1000,
                    help="the heartbeat timeout (FTMPI_FT_TIMEOUT_MS; the period is a tenth): how soon the lost "
                         "node is found, and how long a live rank may go unscheduled on the oversubscribed rig "
                         "(default: the library's)")
    a = ap.parse_args()
    a.features = [f for f in a.features.split(",") if f]
    if any(f not in FEATURES for f in a.features):
        ap.error(f"features are among {FEATURES}")
    seeds = trial_seeds(a, "node-loss campaign")

    def describe(rec):
        return (f"np={rec['np']} features={rec['features'] or '-'} cut={rec['cut']} at round {rec['cut_round']} "
                f"extra={rec['extra'] or '-'}"
                + (f" taken-for-failed={rec['false_failures']}" if rec["false_failures"] else ""))

    taken = []
    r = run_trials(seeds, lambda seed: taken.append(trial(a, seed)) or taken[-1], describe, a.budget, a.log,
                   replay_hint="nodeloss_campaign.py --replay", tail=40000 if a.stacks else 1500)
    print(f"\n{r.ran} node-loss trials in {r.seconds:.0f} s: {r.tally['ok']} clean, {r.tally['hang']} hangs, "
          f"{r.tally['fail']} failed, {r.tally['rig']} lost to the rig's Slurm (a task's exit report); "
          f"{sum(bool(t['false_failures']) for t in taken)} trials where a live rank was taken for failed")
    if r.slowest:
        print(f"slowest trial: {r.slowest['secs']:.1f} s (seed {r.slowest['seed']}, {describe(r.slowest)})")
    return 0 if r.tally["ok"] + r.tally["rig"] == r.ran else 1

if __name__ == "__main__":
    sys.exit(main())
