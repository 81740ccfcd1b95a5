#!/usr/bin/env python3
"""An outsider attacks a running 4-rank job; the job must not notice.

usage: outsider.py FTMPIRUN OUTSIDER_PROGRAM PMIX_CLIENT OFI_OUTSIDER

With FTMPI_PROVIDER=tcp in the environment the ranks' data endpoints are
libfabric tcp listeners too, and the data channel is attacked as well.

The job is tests/security/outsider.c: checked allreduces until a stop file
appears. Once every rank has printed "ready rank R pid P" (read from the
pipe: the only synchronization), this script finds each rank's sockets in
/proc (the failure detector's abstract Unix datagram socket, every TCP
listener) and attacks them:

  - as user `nobody` (another user of the node): to every rank's detector
    socket, the detector's own messages claiming each rank failed, left
    normally (goodbye) or beating for another, and random bytes; to every
    TCP listener (the liveness links'), connections that write random bytes
    and liveness handshakes with made-up proofs;
  - as this script's own user but from a process outside the job: the same
    datagrams and forged handshakes (a process of the job's user is refused
    on the TCP listeners too: it does not hold the job's secret);
  - as user `nobody`, a libfabric program (tests/security/ofi_outsider.c)
    sends every TCP listener messages in the form of ftmpi's eager
    messages, with a made-up token (FTMPI_PROVIDER=tcp: the data endpoints
    must refuse them all);
  - as user `nobody`, a PMIx client (tests/launcher/pmix_client.c) given
    rank 0's PMIx environment, the server's address included: ftmpirun's
    PMIx server must refuse it (PMIx_Init fails).

Then it creates the stop file. The job must end with exit 0 and correct
results, with no process declared failed, the ranks must have refused at
least every datagram sent and every connection made (ftmpi_refused_messages, summed over the job) and
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
FORGED_DATA_PER_PORT = 5
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


def wait_for_close(c):
    """Reads until the listener ends the connection: by then it has refused what it got."""
    c.settimeout(5)
    try:
        while c.recv(4096):
            pass
    except OSError:
        pass


def write_to_listeners(ports, rng):
    """Connections that write random bytes, then end; returns how many were made."""
    done = 0
    for port in ports:
        for _ in range(3):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2) as c:
                    done += 1
                    try:  # the listener may reset it before all is written
                        c.sendall(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 256))))
                        c.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    wait_for_close(c)
            except OSError:
                pass
    return done


def forge_handshakes(ports, rng):
    """Liveness handshakes (transport/link_auth.hpp) without the job's secret:
    a hello naming each rank as the listener; where the listener answers with
    its proof, a made-up proof back. Returns how many connections were made,
    and the ports that answered with a proof (the liveness listeners)."""
    done = 0
    liveness = set()
    for port in ports:
        for listener in range(NP):
            watcher = (listener + 1) % NP
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2) as c:
                    c.sendall(b"H" + struct.pack("<II", watcher, listener) + rng.randbytes(16))
                    done += 1
                    c.settimeout(5)
                    reply = b""
                    try:  # a hello naming another rank is answered by a reset
                        while len(reply) < 49:
                            chunk = c.recv(49 - len(reply))
                            if not chunk:
                                break
                            reply += chunk
                        if len(reply) == 49 and reply[:1] == b"P":
                            liveness.add(port)
                            c.sendall(b"W" + rng.randbytes(32))
                    except OSError:
                        pass
                    wait_for_close(c)
            except OSError:
                pass
    return done, liveness


def become_nobody():
    nobody = pwd.getpwnam("nobody")
    os.setgroups([])
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)


def as_nobody(names, ports, data_ports, datagrams, rng):
    """Runs the attack in a child switched to user nobody; returns (datagrams sent, connections)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            become_nobody()
            # libfabric's own listeners take care of junk themselves: not counted.
            write_to_listeners(data_ports, rng)
            result = (f"{send_datagrams(names, datagrams)} "
                      f"{write_to_listeners(ports, rng) + forge_handshakes(ports, rng)[0]}")
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


def ofi_as_nobody(program, ports):
    """Runs the libfabric outsider as nobody; returns how many messages it sent."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "FI_TCP_IFACE": "lo", "FI_PROVIDER": "tcp"}
    r = subprocess.run([program, str(FORGED_DATA_PER_PORT)] + [str(p) for p in ports], env=env, cwd="/",
                       preexec_fn=become_nobody, capture_output=True, text=True, timeout=120)
    m = re.search(r"ofi_outsider: sent (\d+)", r.stdout)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"the libfabric outsider failed ({r.returncode}): {r.stdout}{r.stderr}")
    return int(m.group(1))


def pmix_client_as_nobody(client, rank_pid):
    """Runs `client init` as nobody with the rank's PMIX_* environment; returns (exit code, output)."""
    with open(f"/proc/{rank_pid}/environ", "rb") as f:
        env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    env = {k.decode(): v.decode() for k, v in env.items() if k.startswith(b"PMIX_") or k == b"PATH"}
    try:
        r = subprocess.run([client, "init", "print:CONNECTED", "finalize"], env=env, cwd="/", preexec_fn=become_nobody,
                           capture_output=True, text=True, timeout=30)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return None, "no answer in 30 s"


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    ftmpirun, program, client, ofi_outsider = sys.argv[1:]
    tcp = os.environ.get("FTMPI_PROVIDER") == "tcp"
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
        # A forged hello that names a listener's own rank gets its proof:
        # that tells the liveness listeners from libfabric's (tcp: the data endpoints).
        _, liveness_ports = forge_handshakes(ports, rng)
        forged_self = forge_handshakes(sorted(liveness_ports), rng)[0]
        data_ports = [p for p in ports if p not in liveness_ports]
        sent_nobody, connections = as_nobody(names, sorted(liveness_ports), data_ports, datagrams, rng)
        sent_self = send_datagrams(names, datagrams)
        forged_data = ofi_as_nobody(ofi_outsider, data_ports) if data_ports else 0
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
          f"from a process outside the job {sent_self}; connections as nobody {connections}, "
          f"forged handshakes from a process outside the job {forged_self}; forged data messages {forged_data}")
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
    elif int(m.group(2)) < sent_nobody + sent_self + connections + forged_self + forged_data:
        problems.append(f"the ranks refused {m.group(2)} inputs of {sent_nobody + sent_self} datagrams, "
                        f"{connections + forged_self} connections and {forged_data} data messages")
    if tcp and forged_data < NP * FORGED_DATA_PER_PORT:
        problems.append(f"{forged_data} forged data messages sent: the data endpoints were not all reached")
    if len(liveness_ports) != NP or connections < (3 + NP) * NP or forged_self < NP * NP:
        problems.append(f"{len(liveness_ports)} liveness listeners of {len(ports)} TCP listeners, {connections} "
                        f"connections as nobody, {forged_self} forged handshakes: the liveness listeners were not "
                        "all reached")
    if pmix_rc is None or pmix_rc == 0 or "CONNECTED" in pmix_out:
        problems.append("ftmpirun's PMIx server took a client of another user")
    for channel in ("detector", "liveness") + (("data",) if tcp else ()):
        if f"{channel} channel: refused input" not in err:
            problems.append(f"no refusal on the {channel} channel logged")
    if re.search(r"is failed|declared failed|leaves the job", err):
        problems.append("a process was taken for failed")
    for p in problems:
        print(f"FAIL: {p}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
