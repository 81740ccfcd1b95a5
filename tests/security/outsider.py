#!/usr/bin/env python3
"""An outsider attacks a running 4-rank job; the job must not notice.

usage: outsider.py FTMPIRUN OUTSIDER_PROGRAM PMIX_CLIENT

The job is tests/security/outsider.c: checked allreduces until a stop file
appears. Once every rank has printed "ready rank R pid P" (read from the
pipe: the only synchronization), this script finds each rank's sockets in
/proc (the failure detector's abstract Unix datagram socket, every TCP
listener) and attacks them:

  - as user `nobody` (another user of the node): to every rank's detector
    socket, the detector's own messages claiming each rank failed, left
    normally (goodbye) or beating for another, and random bytes; to every
    TCP listener, connections that write random bytes;
  - as this script's own user but from a process outside the job: the same
    datagrams;
  - as user `nobody`, a PMIx client (tests/launcher/pmix_client.c) given
    rank 0's PMIx environment, the server's address included: ftmpirun's
    PMIx server must refuse it (PMIx_Init fails).

Then it creates the stop file. The job must end with exit 0 and correct
results, with no process declared failed, the ranks must have refused at
least every datagram sent (ftmpi_refused_messages, summed over the job) and
logged the refusals. Exit 77 (skipped) where the script cannot switch to
user `nobody` (not root, or no such user).
"""
import os
import pwd
import random
import re
import selectors
import socket
import struct
import subprocess
import sys
import tempfile
import time

NP = 4
READY = re.compile(r"^ready rank (\d+) pid (\d+)$", re.M)
RESULT = re.compile(r"^outsider: (\d+) rounds, refused (\d+)$", re.M)
READY_DEADLINE_S = 30.0
END_DEADLINE_S = 60.0
# ft/detector_core.cpp: type, count, reserved, from, known, digest; then ids.
HEARTBEAT, FAILED, SYNC_REQUEST, GOODBYE = 1, 2, 3, 4


def detector_msg(kind, sender, ids=()):
    return struct.pack("=BBHIII", kind, len(ids), 0, sender, 0, 0) + b"".join(struct.pack("=i", i) for i in ids)


def forged_datagrams(rng):
    out = []
    for sender in range(NP):
        out.append(detector_msg(HEARTBEAT, sender))
        out.append(detector_msg(GOODBYE, sender))
        out.append(detector_msg(SYNC_REQUEST, sender))
        out.append(detector_msg(FAILED, sender, range(NP)))
        for victim in range(NP):
            out.append(detector_msg(FAILED, sender, [victim]))
    out += [bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 128))) for _ in range(8)]
    return out


def socket_inodes(pid):
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        m = re.fullmatch(r"socket:\[(\d+)\]", link)
        if m:
            inodes.add(int(m.group(1)))
    return inodes


def abstract_dgram_names(inodes):
    """Abstract names of the Unix datagram sockets among `inodes`."""
    names = []
    with open("/proc/net/unix") as f:
        next(f)
        for line in f:
            cols = line.split()
            # Num RefCount Protocol Flags Type St Inode [Path]
            if len(cols) >= 8 and int(cols[6]) in inodes and cols[4] == "0002" and cols[7].startswith("@"):
                names.append(cols[7][1:])
    return names


def tcp_listen_ports(inodes):
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    cols = line.split()
                    if cols[3] == "0A" and int(cols[9]) in inodes:  # LISTEN
                        ports.add(int(cols[1].rsplit(":", 1)[1], 16))
        except FileNotFoundError:
            pass
    return sorted(ports)


def send_datagrams(names, datagrams):
    sent = 0
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    for name in names:
        for d in datagrams:
            try:
                s.sendto(d, b"\0" + name.encode())
                sent += 1
            except OSError:
                pass
    s.close()
    return sent


def write_to_listeners(ports, rng):
    done = 0
    for port in ports:
        for _ in range(3):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2) as c:
                    c.sendall(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 256))))
                    done += 1
            except OSError:
                pass
    return done


def as_nobody(names, ports, datagrams, rng):
    """Runs the attack in a child switched to user nobody; returns (datagrams sent, connections)."""
    nobody = pwd.getpwnam("nobody")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            result = f"{send_datagrams(names, datagrams)} {write_to_listeners(ports, rng)}"
        except Exception as e:  # the parent reports it
            result = f"error {e}"
        os.write(w, result.encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 4096):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    fields = data.decode().split()
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        raise RuntimeError(f"the attack as nobody failed: {data.decode()}")
    return int(fields[0]), int(fields[1])


def pmix_client_as_nobody(client, rank_pid):
    """Runs `client init` as nobody with the rank's PMIX_* environment; returns (exit code, output)."""
    with open(f"/proc/{rank_pid}/environ", "rb") as f:
        env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    env = {k.decode(): v.decode() for k, v in env.items() if k.startswith(b"PMIX_") or k == b"PATH"}
    nobody = pwd.getpwnam("nobody")

    def become_nobody():
        os.setgroups([])
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    try:
        r = subprocess.run([client, "init", "print:CONNECTED", "finalize"], env=env, cwd="/", preexec_fn=become_nobody,
                           capture_output=True, text=True, timeout=30)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return None, "no answer in 30 s"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ftmpirun, program, client = sys.argv[1:]
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        print("SKIP: no user nobody")
        sys.exit(77)
    if os.geteuid() != 0:
        print("SKIP: switching to user nobody needs root")
        sys.exit(77)
    rng = random.Random(20261126)
    with tempfile.TemporaryDirectory() as tmp:
        stop = os.path.join(tmp, "stop")
        job = subprocess.Popen([ftmpirun, "-n", str(NP), program, stop], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        out, err = "", ""
        # Raw reads of the pipe: a buffered readline() may take several lines
        # at once, and select() would then wait for more that never come.
        sel = selectors.DefaultSelector()
        sel.register(job.stdout.fileno(), selectors.EVENT_READ)
        deadline = time.monotonic() + READY_DEADLINE_S
        while len(READY.findall(out)) < NP and time.monotonic() < deadline:
            if sel.select(timeout=deadline - time.monotonic()):
                chunk = os.read(job.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk.decode()
        ranks = {int(r): int(p) for r, p in READY.findall(out)}
        if len(ranks) != NP:
            job.kill()
            o, e = job.communicate()
            print(f"FAIL: the job did not start ({len(ranks)} of {NP} ready)\n{out}{o}\n{e}")
            sys.exit(1)
        inodes = set()
        for pid in ranks.values():
            inodes |= socket_inodes(pid)
        names = abstract_dgram_names(inodes)
        ports = tcp_listen_ports(inodes)
        datagrams = forged_datagrams(rng)
        sent_nobody, connections = as_nobody(names, ports, datagrams, rng)
        sent_self = send_datagrams(names, datagrams)
        pmix_rc, pmix_out = pmix_client_as_nobody(client, ranks[0])
        open(stop, "w").close()
        try:
            o, e = job.communicate(timeout=END_DEADLINE_S)
        except subprocess.TimeoutExpired:
            job.kill()
            o, e = job.communicate()
            print(f"FAIL: the job did not end after the stop file\n{out}{o}\n{e}")
            sys.exit(1)
        out += o
        err = e
    print(f"detector sockets {len(names)}, TCP listeners {len(ports)}; datagrams sent as nobody {sent_nobody}, "
          f"from a process outside the job {sent_self}; connections as nobody {connections}")
    print(f"PMIx client as nobody: exit {pmix_rc}: {pmix_out.strip()}")
    print(out, end="")
    print(err, end="", file=sys.stderr)
    problems = []
    if job.returncode != 0:
        problems.append(f"the job exited {job.returncode}")
    if len(names) != NP:
        problems.append(f"{len(names)} detector sockets found, expected {NP}")
    if sent_nobody == 0 or sent_self == 0:
        problems.append("no datagram could be sent")
    m = RESULT.search(out)
    if not m:
        problems.append("no result line")
    elif int(m.group(2)) < sent_nobody + sent_self:
        problems.append(f"the ranks refused {m.group(2)} datagrams of {sent_nobody + sent_self} sent")
    if pmix_rc is None or pmix_rc == 0 or "CONNECTED" in pmix_out:
        problems.append("ftmpirun's PMIx server took a client of another user")
    if "detector channel: refused input" not in err:
        problems.append("no refusal logged")
    if re.search(r"is failed|declared failed|leaves the job", err):
        problems.append("a process was taken for failed")
    for p in problems:
        print(f"FAIL: {p}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
