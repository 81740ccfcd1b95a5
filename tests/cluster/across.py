#!/usr/bin/env python3
"""ftmpirun across the rig's nodes: `salloc -N 2 ftmpirun ...` (with_rig.sh;
--nodes 3: the rig's three).

usage: across.py --ftmpirun PATH SCENARIO [options]

Scenarios (each runs one job, or --runs of them, and checks it):
  ring      4 ranks per node: every rank's line, tagged with its node, and
            each node's daemon binding its own
  kill      a rank on ftn2 dies (SIGKILL): the survivors get
            MPI_ERR_PROC_FAILED (cluster_fault PROGRAM MODE 3); exit 0
  noft      the same under --with-ft no: the first failure ends the job
            on both nodes (exit 137, no survivor finishes)
  stranded  rank 1 (ftn2) stops itself (SIGSTOP) and rank 0 finalizes and
            leaves: no detector is left to find it, so ftmpirun kills it
            (tests/launcher/pmix_client)
  launcher  with raw PMIx clients (tests/launcher/pmix_client), ranks over
            the nodes: fences (all, and all but one rank), every line of
            a chatty job, a kill through PMIx job control and its event,
            PMIx_Abort's exit code, --timeout, stdin to rank 0, SIGTERM
  names     tests/integration/names.c over the nodes: the name service is
            the job's, whichever node publishes or looks up
  spawnhost MPI_Comm_spawn with the host info key starts the children on
            the node it names (cluster_fault spawnhost)
  nodeloss  node ftn2 (--lose) is lost once every rank is ready (--how
            cut: its link goes down; --how daemon: its daemon is
            SIGKILLed): the survivors learn of all its ranks' failure,
            shrink and finish; ftmpirun exits 0 and names the lost node.
            With --fanout 1 the daemons form a chain below the head (ftn2's
            below ftn1's, ftn3's below ftn2's): the one below the lost node
            reattaches to the head and its ranks (and its subtree) go on
  headkill  ftmpirun itself is SIGKILLed while the ranks run (--runs N):
            no rank, daemon or /dev/shm region is left on any node
  respawn   examples/respawn at 8 ranks on 2 nodes survives 5 recoveries,
            one of them from the loss of ftn2 (its daemon SIGKILLed after
            the first), and ends at 8 ranks with every rank kept
  latency   benchmarks/detect kill (--runs N) with ranks dealt over the
            nodes (--map-by node): the kill-to-error times of the ranks on
            ftn2, seen by rank 0 on ftn1; prints their median
"""
import argparse
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import time

NODES = ("ftn1", "ftn2", "ftn3")  # the rig's; a job uses the first --nodes
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def node_pids(node):
    out = subprocess.run(["ip", "netns", "pids", node], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def job_processes():
    """Processes on the nodes other than Slurm's daemons."""
    return [f"{n}:{p}:{comm(p)}" for n in NODES for p in node_pids(n)
            if comm(p) not in ("", "slurmd", "slurmstepd")]


def daemon_of(node):
    for p in node_pids(node):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if b"--ftmpi-daemon" in f.read() and comm(p) == "ftmpirun":
                    return p
        except OSError:
            pass
    return None


class Job:
    """A job under salloc, its stdout read line by line without buffering
    (so that a line read is never one a select() would not see), the rest
    of its output collected at the end."""

    def __init__(self, args, cmd, env=None, bind=False, stdin=None):
        # The rig's nodes share this machine's cores: bound per node, every
        # node's rank r would sit on the same core, so that the ranks of two
        # "nodes" take turns there (a spinning receiver holds the core for a
        # whole time slice, 4 ms). Unbound, unless the test is of binding.
        full = ["salloc", "-N", str(args.nodes), "--quiet", args.ftmpirun] + ([] if bind else ["--bind-to", "none"]) + cmd
        # FTMPI_YIELD=1: the ranks of both "nodes" share this machine's
        # cores, which a node's own count does not see.
        # The heartbeat's timeout: 1 s (its default), so that a live rank is
        # not taken for failed while 8 share the rig's 2 cores; the node-loss
        # tests, which measure detection, shorten it.
        e = dict(os.environ, FTMPI_FT_TIMEOUT_MS="1000", FTMPI_FT_PERIOD_MS="100", FTMPI_LAUNCH_TIMEOUT_MS="1500",
                 FTMPI_LAUNCH_PERIOD_MS="100", FTMPI_YIELD="1")
        e.update(env or {})
        self.proc = subprocess.Popen(full, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0, env=e,
                                     start_new_session=True)
        if stdin is not None:
            self.proc.stdin.write(stdin)
            self.proc.stdin.close()
            self.proc.stdin = None
        self.pid = self.proc.pid
        self.pending = b""

    def lines_until(self, pattern, count, deadline):
        """Reads stdout until `count` lines matched `pattern` or the deadline
        passed; returns the lines read, and whether they all came."""
        got, n = [], 0
        rx = re.compile(pattern)
        fd = self.proc.stdout.fileno()
        while n < count and time.monotonic() < deadline:
            while b"\n" in self.pending and n < count:
                line, self.pending = self.pending.split(b"\n", 1)
                text = line.decode(errors="replace")
                got.append(text)
                n += bool(rx.search(text))
            if n >= count:
                break
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                self.pending += chunk
        return got, n >= count

    def finish(self, timeout):
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # The whole session: salloc runs ftmpirun in a process group of
            # its own, which would keep stdout open after salloc's death.
            subprocess.run(["pkill", "-KILL", "-s", str(self.pid)])
            out, err = self.proc.communicate(timeout=30)
            check(False, f"the job did not end within {timeout} s")
        out = (self.pending + out).decode(errors="replace")
        err = err.decode(errors="replace")
        sys.stdout.write(out)
        sys.stderr.write(err)
        return self.proc.returncode, out, err


def start(args, cmd, env=None, bind=False):
    return Job(args, cmd, env, bind)


def finish(job, timeout):
    return job.finish(timeout)


def lines_until(job, pattern, count, deadline):
    return job.lines_until(pattern, count, deadline)


def no_leftovers(what, regions=()):
    deadline = time.monotonic() + 15
    left = job_processes()
    while left and time.monotonic() < deadline:
        time.sleep(0.2)  # polling for the nodes' processes to end, bounded above
        left = job_processes()
    check(not left, f"{what}: processes left on the nodes: {left}")
    stale = [r for r in os.listdir("/dev/shm") for pid in regions if r.startswith(f"ftmpi-{pid}-")]
    check(not stale, f"{what}: /dev/shm regions left: {stale}")


def ring(args):
    n = 4 * args.nodes
    rc, out, err = finish(start(args, ["--tag-output", "--report-bindings", "-n", str(n), args.program], bind=True), 60)
    check(rc == 0, f"exit status {rc}")
    for r in range(n):
        node = NODES[r // 4]
        check(re.search(rf"^\[{node}:{r}\] rank {r} of {n} received token {r} ", out, re.M),
              f"no line of rank {r} from {node}")
        # each node's daemon binds its own ranks (to this machine's cores)
        check(re.search(rf"rank {r} on {node} bound to core \d+ ", err), f"rank {r} not bound on {node}")
    no_leftovers("ring")


def kill(args):
    rc, out, err = finish(start(args, ["-n", "4", args.program, args.mode, "3"]), 60)
    check(rc == 0, f"exit status {rc}")
    check(re.search(rf"^cluster_fault {args.mode}: 3 survivors ok$", out, re.M), "survivors did not finish")
    check(re.search(r"rank 3 \(pid \d+ on ftn2\) killed by signal 9", err), "the death was not reported")
    no_leftovers("kill")


def noft(args):
    rc, out, err = finish(start(args, ["--with-ft", "no", "-n", "4", args.program, "p2p", "3"]), 60)
    check(rc == 137, f"exit status {rc}, expected 137")
    check("survivors ok" not in out, "survivors finished although fault tolerance was off")
    check(re.search(r"rank 3 \(pid \d+ on ftn2\) killed by signal 9", err), "the death was not reported")
    no_leftovers("noft")


def stranded(args):
    env = {"FTMPI_FT_TIMEOUT_MS": "300"}
    rc, out, err = finish(start(args, ["--map-by", "node", "-n", "2", args.program, "init", "@1:kill:19",
                                       "finalize", "exit:0"], env), 60)
    check(rc == 0, f"exit status {rc}")
    check(re.search(r"rank 1 \(pid \d+ on ftn2\) is stopped and every other rank has ended: killing it", err),
          "the stopped rank was not found")
    no_leftovers("stranded")


def launcher(args):
    """What ftmpirun does for a one-node job, across nodes, with raw PMIx
    clients (tests/launcher/pmix_client): ranks dealt over the nodes."""
    def run(cmd, env=None, timeout=60):
        return start(args, ["--map-by", "node"] + cmd, env).finish(timeout)

    P = args.program
    # fences across nodes: the whole namespace, then all but a rank of the other node
    rc, out, err = run(["-n", "4", P, "init", "fence", "@0:fenceexcept:3", "@1:fenceexcept:3", "@2:fenceexcept:3",
                        "finalize"])
    check(rc == 0, f"fences: {rc}")
    # every line of a chatty job, whole
    rc, out, err = run(["-n", "4", P, "init", "lines:500", "finalize"])
    for r in range(4):
        n = len(re.findall(rf"^rank {r} line \d+$", out, re.M))
        check(n == 500, f"lines: rank {r} printed {n} of 500")
    # a kill through PMIx job control of a rank on the other node, and its event
    rc, out, err = run(["-n", "2", P, "init", "handler", "@0:mark", "@0:jobkill:1", "@0:waitdeath:1", "@0:finalize",
                        "@1:hang"])
    check(rc == 0 and re.search(r"rank 1 \(pid \d+ on ftn2\) killed by signal 9", err), f"jobkill: {rc}")
    # PMIx_Abort on the other node: the job ends with its code
    rc, out, err = run(["-n", "2", P, "init", "@1:abort:7", "hang"])
    check(rc == 7 and re.search(r"MPI_Abort called by rank 1 \(pid \d+ on ftn2\) with code 7", err), f"abort: {rc}")
    # --timeout
    rc, out, err = run(["--timeout", "2", "-n", "2", P, "init", "hang"])
    check(rc == 124 and "job timed out after 2 seconds" in err, f"timeout: {rc}")
    # stdin reaches rank 0
    job = Job(args, ["--map-by", "node", "-n", "2", P, "init", "@0:stdin", "finalize"], stdin=b"one\ntwo\n")
    rc, out, err = job.finish(60)
    # rank 0's lines in order; rank 1's own lines may come between them
    read = [line for line in out.splitlines() if line.startswith("stdin: ")]
    check(rc == 0 and read == ["stdin: one", "stdin: two", "stdin: EOF"], f"stdin: {rc}, rank 0 read {read}")
    # SIGTERM to ftmpirun: forwarded to every rank, exit 143
    job = start(args, ["--map-by", "node", "-n", "2", P, "init", "print:up", "hang"])
    got, up = job.lines_until(r"^up$", 2, time.monotonic() + 60)
    head = subprocess.run(["pgrep", "-P", str(job.pid), "-x", "ftmpirun"], capture_output=True, text=True).stdout.split()
    for h in head:
        os.kill(int(h), signal.SIGTERM)
    rc, out, err = job.finish(60)
    check(up and rc == 143 and "received SIGTERM, forwarding it to the ranks" in err, f"sigterm: {rc}")
    no_leftovers("launcher")


def names(args):
    # tests/integration/names.c with its ranks dealt over the nodes: names
    # published on one node are found on the other (the head's store)
    rc, out, err = finish(start(args, ["--map-by", "node", "-n", "4", args.program]), 60)
    check(rc == 0, f"exit status {rc}")
    no_leftovers("names")


def spawnhost(args):
    rc, out, err = finish(start(args, ["-n", "2", args.program, "spawnhost"]), 60)
    check(rc == 0, f"exit status {rc}")
    check(re.search(r"^cluster_fault spawnhost: ok$", out, re.M), "the children were not where asked")
    no_leftovers("spawnhost")


def nodeloss(args):
    lose, per = args.lose, 2
    n = per * args.nodes
    env = {"FTMPI_FT_TIMEOUT_MS": "500", "FTMPI_FT_PERIOD_MS": "50"}
    if args.fanout:
        env["FTMPI_LAUNCH_FANOUT"] = str(args.fanout)
    proc = start(args, ["-n", str(n), args.program, "nodeloss"], env)
    got, ready = lines_until(proc, r"^ready \d+ ftn\d$", n, time.monotonic() + 60)
    print("\n".join(got), flush=True)
    check(ready, "the ranks did not all get ready")
    cut = False
    try:
        if ready and args.how == "cut":
            subprocess.run(["ip", "-n", lose, "link", "set", "rig0", "down"], check=True)
            cut = True
        elif ready:
            d = daemon_of(lose)
            check(d is not None, f"no daemon on {lose}")
            if d:
                os.kill(d, signal.SIGKILL)
        rc, out, err = finish(proc, 60)
    finally:
        if cut:
            subprocess.run(["ip", "-n", lose, "link", "set", "rig0", "up"], check=True)
    check(rc == 0, f"exit status {rc}")
    k = NODES.index(lose)
    lost = list(range(per * k, per * (k + 1)))
    for r in range(n):
        if r not in lost:
            check(re.search(rf"^shrunk {r} size={n - per} sum={n - per} ", out, re.M),
                  f"rank {r} did not shrink to the {n - per} survivors")
    check(re.search(rf"node {lose} lost \(.*\): its processes {','.join(map(str, lost))} are failed", err),
          "ftmpirun did not name the lost node")
    if args.fanout == 1 and k + 1 < args.nodes:  # the next node hung below the lost one: it goes on under the head
        nxt = NODES[k + 1]
        check(re.search(rf"{nxt}: lost the link to the daemon of {lose} .*: attached to ftmpirun directly", err),
              f"{nxt} did not reattach to the head")
    no_leftovers("nodeloss")


def headkill(args):
    for run in range(args.runs):
        proc = start(args, ["-n", "4", args.program, "hold"])
        got, ready = lines_until(proc, r"^ready rank \d+ pid \d+ child \d+$", 4, time.monotonic() + 60)
        check(ready, f"run {run}: the ranks did not all get ready")
        pids = [m.group(1) for l in got for m in [re.search(r"pid (\d+)", l)] if m]
        head = subprocess.run(["pgrep", "-P", str(proc.pid), "-x", "ftmpirun"], capture_output=True,
                              text=True).stdout.split()
        check(len(head) == 1, f"run {run}: ftmpirun not found under salloc")
        for h in head:
            os.kill(int(h), signal.SIGKILL)
        finish(proc, 60)
        no_leftovers(f"run {run}", pids)
        # and the daemons' srun, on this side, ends with them
        deadline = time.monotonic() + 15
        while subprocess.run(["pgrep", "-x", "srun"], capture_output=True).returncode == 0 and time.monotonic() < deadline:
            time.sleep(0.2)  # polling for srun to end, bounded above
        check(subprocess.run(["pgrep", "-x", "srun"], capture_output=True).returncode != 0, f"run {run}: srun left")
        print(f"headkill run {run}: clean", flush=True)


def respawn(args):
    proc = start(args, ["-n", "8", args.program, "5", "7"])
    got, first = lines_until(proc, r"^recovery 1:", 1, time.monotonic() + 120)
    print("\n".join(got), flush=True)
    check(first, "no first recovery")
    d = daemon_of("ftn2")
    check(d is not None, "no daemon on ftn2")
    if d:
        os.kill(d, signal.SIGKILL)
    rc, out, err = finish(proc, 180)
    check(rc == 0, f"exit status {rc}")
    check(re.search(r"^respawn: 5 failures recovered, 8 ranks at the end", out, re.M), "the job did not end at 8 ranks")
    check(re.search(r"node ftn2 lost", err), "ftmpirun did not name the lost node")
    no_leftovers("respawn")


def latency(args):
    times = []
    for run in range(args.runs):
        rc, out, err = finish(start(args, ["--map-by", "node", "-n", str(args.np), args.program, "kill"]), 60)
        check(rc == 0, f"run {run}: exit status {rc}")
        # odd ranks are on ftn2 (dealt round-robin), rank 0 on ftn1
        times += [float(m.group(2)) for m in re.finditer(r"^rank (\d+) SIGKILL .* after ([\d.]+) ms$", out, re.M)
                  if int(m.group(1)) % 2 == 1]
    check(times, "no kill-to-error time measured")
    if times:
        print(f"kill to MPI_ERR_PROC_FAILED across nodes: {len(times)} kills, median {statistics.median(times):.3f} ms,"
              f" min {min(times):.3f} ms, max {max(times):.3f} ms")
    no_leftovers("latency")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ftmpirun", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--mode", default="p2p")
    ap.add_argument("--how", choices=("cut", "daemon"), default="cut")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=2, choices=(2, 3), help="the job's nodes (salloc -N)")
    ap.add_argument("--np", type=int, default=4, help="latency: ranks (dealt over the nodes)")
    ap.add_argument("--lose", choices=NODES, default="ftn2", help="nodeloss: the node lost")
    ap.add_argument("--fanout", type=int, default=0, help="nodeloss: FTMPI_LAUNCH_FANOUT (1: ftn2 below ftn1)")
    ap.add_argument("scenario", choices=("ring", "kill", "noft", "stranded", "launcher", "names", "spawnhost",
                                         "nodeloss", "headkill", "respawn", "latency"))
    args = ap.parse_args()
    globals()[args.scenario](args)
    if failures:
        print(f"across {args.scenario}: {len(failures)} problem(s)")
        return 1
    print(f"across {args.scenario}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
