#!/usr/bin/env python3
"""Run one multi-process test command with a deadline and an orphan check.

usage: harness.py --timeout SECS [--expect-exit N] [--expect-stdout REGEX]...
                  [--expect-stderr REGEX]... [--reject-stdout REGEX]...
                  [--reject-stderr REGEX]... [--env K=V]... [--stdin TEXT]
                  [--signal-after-stdout REGEX:SIGNAME]
                  [--expect-lines FILE --lines-matching REGEX]
                  -- command args...

Contract:
  * The command runs in a NEW SESSION (so a new process group) with the
    environment plus every --env K=V.  Its stdin is /dev/null unless --stdin
    TEXT is given (then TEXT is written to it and it is closed).
  * Its stdout and stderr are captured and echoed (for the test log).
  * If it has not exited after SECS seconds, the whole process group is
    SIGKILLed and the test FAILS with "TIMEOUT".
  * After it exits, /proc is scanned for any process still in the command's
    session.  Any that has not exited ORPHAN_GRACE_S (2 s) later is
    SIGKILLed and the test FAILS with "orphans left: pid cmdline".
  * --signal-after-stdout REGEX:SIG sends SIG to the command (not its group)
    once its stdout matches REGEX (used to test signal forwarding).
  * Exit 0 only if the exit code equals --expect-exit (default 0), every
    --expect-* regex (Python re, MULTILINE) is found, and no --reject-* regex
    is found, and, with --expect-lines, the stdout lines matching
    --lines-matching are exactly FILE's lines: the same multiset, and, per
    value of the regex's first group (a rank), in FILE's order (ranks
    print concurrently, each in order).
    Otherwise exit 1 with one "FAIL: ..." line per problem.
Only the Python standard library is used.
"""
import argparse
import os
import re
import selectors
import signal
import subprocess
import sys
import time


def session_members(sid):
    """(pid, cmdline) of every live process whose session id is `sid`."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            # Field 6 is the session id; comm (field 2) may contain spaces.
            fields = stat[stat.rindex(")") + 2:].split()
            state, session = fields[0], int(fields[3])
            if session != sid or state == "Z":
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            out.append((pid, cmd))
        except (OSError, ValueError, IndexError):
            continue  # exited while we looked
    return out


# A process already SIGKILLed (e.g. by PR_SET_PDEATHSIG when its parent died)
# can still be listed for a moment; one that has not exited within this many
# seconds (waited for on its pidfd, not slept) is an orphan.
ORPHAN_GRACE_S = 2.0


def still_alive(procs, grace):
    """The subset of `procs` that has not exited within `grace` seconds."""
    if not procs:
        return []
    sel = selectors.DefaultSelector()
    fds = {}
    for pid, cmd in procs:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        fds[fd] = (pid, cmd)
        sel.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + grace
    while sel.get_map():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        for key, _ in sel.select(timeout=left):
            sel.unregister(key.fd)
            os.close(key.fd)
            fds.pop(key.fd)
    for fd in fds:
        os.close(fd)
    return list(fds.values())


class Result:
    """What run_command saw: code is None when the deadline passed."""

    def __init__(self, code, returncode, out, err, elapsed, orphans):
        self.code, self.returncode, self.out, self.err = code, returncode, out, err
        self.elapsed, self.orphans = elapsed, orphans


def run_command(cmd, env, timeout, stdin_text=None, on_stdout=None, on_timeout=None):
    """Runs cmd in a new session with a deadline, captures its output, then
    SIGKILLs whatever of its session outlives it (the orphans, listed).
    on_stdout(proc, stdout so far) runs after each read of its stdout;
    on_timeout(session id) before a command past its deadline is killed."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, start_new_session=True,
                            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sid = proc.pid  # session leader: its pid is the session and group id
    if stdin_text is not None:
        try:
            proc.stdin.write(stdin_text.encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass

    bufs = {"stdout": b"", "stderr": b""}
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
    sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
    # The pidfd becomes readable when the command exits, even if an orphan
    # still holds its pipes open.
    pidfd = os.pidfd_open(proc.pid)
    sel.register(pidfd, selectors.EVENT_READ, "exit")
    deadline = start + timeout
    timed_out = exited = False

    def read_pipe(key):
        try:
            data = os.read(key.fileobj.fileno(), 65536)
        except BlockingIOError:
            return False
        if not data:
            sel.unregister(key.fileobj)
            return False
        bufs[key.data] += data
        return True

    while not exited:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        for key, _ in sel.select(timeout=left):
            if key.data == "exit":
                exited = True
                continue
            if read_pipe(key) and key.data == "stdout" and on_stdout:
                on_stdout(proc, bufs["stdout"].decode(errors="replace"))
    if exited:
        # Collect what the command wrote before exiting, without waiting for
        # EOF (an orphan may hold the pipes open).
        for key in list(sel.get_map().values()):
            if key.data == "exit":
                continue
            os.set_blocking(key.fileobj.fileno(), False)
            while key.fileobj in sel.get_map() and read_pipe(key):
                pass
        proc.wait()
    os.close(pidfd)
    sel.close()
    if timed_out:
        if on_timeout:
            on_timeout(sid)
        try:
            os.killpg(sid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    elapsed = time.monotonic() - start
    proc.stdout.close()
    proc.stderr.close()

    orphans = still_alive(session_members(sid), ORPHAN_GRACE_S)
    for pid, _ in orphans:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return Result(None if timed_out else proc.returncode, proc.returncode,
                  bufs["stdout"].decode(errors="replace"), bufs["stderr"].decode(errors="replace"), elapsed, orphans)



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--timeout", type=float, required=True)
    ap.add_argument("--expect-exit", type=int, default=0)
    ap.add_argument("--expect-stdout", action="append", default=[])
    ap.add_argument("--expect-stderr", action="append", default=[])
    ap.add_argument("--reject-stdout", action="append", default=[])
    ap.add_argument("--reject-stderr", action="append", default=[])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--expect-lines", default=None)
    ap.add_argument("--lines-matching", default=None)
    ap.add_argument("--stdin", default=None)
    ap.add_argument("--signal-after-stdout", default=None)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.expect_lines and not a.lines_matching:
        ap.error("--expect-lines needs --lines-matching")
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no command given after --")

    env = dict(os.environ)
    for kv in a.env:
        k, sep, v = kv.partition("=")
        if not sep:
            ap.error(f"--env expects K=V, got {kv!r}")
        env[k] = v
    sig_re = sig_num = None
    if a.signal_after_stdout:
        pat, _, name = a.signal_after_stdout.rpartition(":")
        sig_re, sig_num = re.compile(pat, re.M), getattr(signal, name)

    print("harness: running:", " ".join(cmd), flush=True)
    on_stdout = None
    if sig_re:
        sent = []

        def on_stdout(proc, text):
            if not sent and sig_re.search(text):
                sent.append(True)
                try:
                    os.kill(proc.pid, sig_num)
                except ProcessLookupError:
                    pass

    r = run_command(cmd, env, a.timeout, a.stdin, on_stdout)
    problems = []
    if r.code is None:
        problems.append(f"TIMEOUT after {a.timeout} s")
    if r.orphans:
        problems.append("orphans left: " + "; ".join(f"{p} {c}" for p, c in r.orphans))
    out, err = r.out, r.err
    sys.stdout.write("---- stdout ----\n" + out + "---- stderr ----\n" + err + "----\n")
    print(f"harness: exit code {r.returncode} after {r.elapsed:.3f} s", flush=True)

    if r.code is not None and r.code != a.expect_exit:
        problems.append(f"exit code {r.code}, expected {a.expect_exit}")
    for name, text, pats, want in (("stdout", out, a.expect_stdout, True),
                                   ("stderr", err, a.expect_stderr, True),
                                   ("stdout", out, a.reject_stdout, False),
                                   ("stderr", err, a.reject_stderr, False)):
        for pat in pats:
            if bool(re.search(pat, text, re.M)) != want:
                problems.append(f"{name} {'lacks' if want else 'has'} /{pat}/")
    if a.expect_lines:
        problems += check_lines(out, a.expect_lines, a.lines_matching)
    for p in problems:
        print("FAIL:", p, flush=True)
    return 1 if problems else 0


def check_lines(out, path, pattern):
    rx = re.compile(pattern)
    with open(path) as f:
        want = [l.rstrip("\n") for l in f if rx.search(l)]
    got = [l for l in out.splitlines() if rx.search(l)]
    problems = []
    if sorted(got) != sorted(want):
        problems.append(f"lines matching /{pattern}/ are {got}, expected {want}")
    key = lambda l: rx.search(l).group(1) if rx.groups else ""
    for k in sorted({key(l) for l in want}):
        g = [l for l in got if key(l) == k]
        w = [l for l in want if key(l) == k]
        if g != w:
            problems.append(f"lines of {k!r} are {g}, expected {w} in that order")
    return problems


if __name__ == "__main__":
    sys.exit(main())
