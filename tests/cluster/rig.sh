#!/usr/bin/env bash
# An emulated three-node Slurm cluster on this machine.
#
#   rig.sh start        build it and wait until both nodes are idle
#   rig.sh stop         kill every daemon it started, remove everything
#   rig.sh status       0 when it is up (prints sinfo), 1 when it is not
#   rig.sh run CMD...   runs CMD where srun reaches the controller (the
#                       controller's namespace, SLURM_CONF set)
#   rig.sh node N CMD.. runs CMD in node N's namespace (N = ftn1 | ftn2 | ftn3)
#
# Layout. A bridge (ftbr0, no address on the host) joins four network
# namespaces by veth pairs; each namespace has one interface, rig0, with an
# address in 10.213.47.0/24, a subnet used only here:
#   ftctl  10.213.47.1   slurmctld, and srun (`rig.sh run`)
#   ftn1   10.213.47.11  slurmd -N ftn1
#   ftn2   10.213.47.12  slurmd -N ftn2
#   ftn3   10.213.47.13  slurmd -N ftn3
# Every Slurm socket therefore lives in a namespace made here; nothing binds
# on the host's own interfaces, and no route leads out of the subnet.
# Daemons start with `nsenter --net=` (`ip netns exec` remounts /sys, and
# slurmd then fails on cgroups). Authentication is auth/none and cred/none
# (no munge); proctrack/linuxproc, task/none and select/cons_tres need no
# cgroups. Each slurmd has its own copy of the configuration, whose mpi.conf
# names its own PMIxCliTmpDirBase: the pmix plugin's client directories
# (/tmp/spmix_appdir_<uid>_<job>.<step>) would collide between two slurmds.
#
# All state (configuration, logs, spool, pid files) is under $FTMPI_RIG_DIR
# (default /tmp/ftmpi-rig). Exit status of start: 0 up, 77 when this machine
# cannot host the rig (not root, no Slurm, no namespaces), 1 on failure (the
# partial rig is then stopped).
set -euo pipefail

D=${FTMPI_RIG_DIR:-/tmp/ftmpi-rig}
NET=10.213.47
BR=ftbr0
NODES=(ftn1 ftn2 ftn3)
declare -A ADDR=([ftctl]=$NET.1 [ftn1]=$NET.11 [ftn2]=$NET.12 [ftn3]=$NET.13)
NSDIR=/var/run/netns
RANKS_PER_NODE=${FTMPI_RIG_CPUS:-4}

log() { echo "rig: $*" >&2; }
skip() { log "SKIP: $*"; exit 77; }

in_ns() { local ns=$1; shift; nsenter --net="$NSDIR/$ns" "$@"; }

ctl() { SLURM_CONF=$D/etc/ftctl/slurm.conf in_ns ftctl "$@"; }

# Polls `cmd` until it succeeds, for at most $1 seconds.
wait_for() {
  local secs=$1; shift
  local until=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < until)) || return 1
    sleep 0.1  # polling a daemon's readiness, bounded by the deadline above
  done
}

check_machine() {
  [[ $(id -u) == 0 ]] || skip "needs root (network namespaces, slurmd)"
  local c
  for c in slurmctld slurmd srun sinfo scontrol nsenter ip; do
    command -v "$c" >/dev/null || skip "'$c' not found (.ci/install-deps installs Slurm 22.05, iproute2, util-linux)"
  done
  compgen -G "/usr/lib/*/slurm*/mpi_pmix.so" >/dev/null || compgen -G "/usr/lib*/slurm*/mpi_pmix.so" >/dev/null ||
    compgen -G "/usr/local/lib*/slurm/mpi_pmix.so" >/dev/null || skip "Slurm's mpi/pmix plugin is not installed"
  ip netns add ftprobe$$ 2>/dev/null || skip "cannot create network namespaces here"
  ip netns del ftprobe$$
  ip link add ftprobebr$$ type bridge 2>/dev/null || skip "cannot create a bridge here"
  ip link del ftprobebr$$
}

write_conf() {
  local name=$1 dir=$D/etc/$1
  mkdir -p "$dir"
  cat >"$dir/slurm.conf" <<CONF
ClusterName=ftrig
SlurmctldHost=$(hostname -s)(${ADDR[ftctl]})
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=300
InactiveLimit=0
KillWait=2
MinJobAge=2
StateSaveLocation=$D/state/ctld
SlurmdSpoolDir=$D/state/%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=ftn1 NodeAddr=${ADDR[ftn1]} CPUs=$RANKS_PER_NODE RealMemory=1000 State=UNKNOWN
NodeName=ftn2 NodeAddr=${ADDR[ftn2]} CPUs=$RANKS_PER_NODE RealMemory=1000 State=UNKNOWN
NodeName=ftn3 NodeAddr=${ADDR[ftn3]} CPUs=$RANKS_PER_NODE RealMemory=1000 State=UNKNOWN
PartitionName=rig Nodes=ftn1,ftn2,ftn3 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
  mkdir -p "$D/pmix/$name"
  echo "PMIxCliTmpDirBase=$D/pmix/$name" >"$dir/mpi.conf"
}

# Starts a daemon in namespace $1 in the background; its pid goes to run/$2.
spawn() {
  local ns=$1 tag=$2; shift 2
  in_ns "$ns" "$@" >>"$D/log/$tag.out" 2>&1 </dev/null &
  echo $! >"$D/run/$tag.daemon"
}

start() {
  check_machine
  if [[ -e $D || -e $NSDIR/ftctl ]] || ip link show $BR >/dev/null 2>&1; then
    log "a previous rig is still here: stopping it first"
    stop
  fi
  mkdir -p "$D"/{run,log,state/ctld}
  trap 'log "start failed; logs:"; tail -n 20 "$D"/log/* >&2 || true; stop; exit 1' ERR

  ip link add $BR type bridge
  ip link set $BR up
  local ns i=0
  for ns in ftctl "${NODES[@]}"; do
    ip netns add "$ns"
    ip link add "ftv$i" type veth peer name rig0 netns "$ns"
    ip link set "ftv$i" master $BR up
    ip -n "$ns" addr add "${ADDR[$ns]}/24" dev rig0
    ip -n "$ns" link set rig0 up
    ip -n "$ns" link set lo up
    i=$((i + 1))
  done

  for ns in ftctl "${NODES[@]}"; do write_conf "$ns"; done
  spawn ftctl slurmctld slurmctld -D -i -f "$D/etc/ftctl/slurm.conf"
  wait_for 30 ctl scontrol ping || { log "slurmctld did not answer within 30 s"; false; }
  for ns in "${NODES[@]}"; do
    mkdir -p "$D/state/$ns"
    spawn "$ns" "slurmd.$ns" slurmd -D -N "$ns" -f "$D/etc/$ns/slurm.conf"
  done
  wait_for 60 nodes_idle || { log "nodes not idle within 60 s: $(ctl sinfo -h -N -o '%N %T' | tr '\n' ' ')"; false; }
  trap - ERR
  log "up: $(ctl sinfo -h -N -o '%N=%T' | tr '\n' ' ')"
}

nodes_idle() {
  local states
  states=$(ctl sinfo -h -N -o '%T' | sort -u)
  [[ $states == idle ]]
}

# Kills every process started from the daemons' pids (the daemons, their
# slurmstepds and any task still alive), then removes all the rig's objects.
stop() {
  local f pid
  for f in "$D"/run/*.daemon; do
    [[ -e $f ]] || continue
    pid=$(<"$f")
    kill_tree "$pid" TERM
  done
  # slurmstepds and tasks may outlive slurmd: every process whose network
  # namespace is one of ours is ours.
  local ns
  for ns in ftctl "${NODES[@]}"; do
    [[ -e $NSDIR/$ns ]] || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
  done
  for f in "$D"/run/*.daemon; do
    [[ -e $f ]] || continue
    pid=$(<"$f")
    kill_tree "$pid" KILL
  done
  for ns in ftctl "${NODES[@]}"; do
    [[ -e $NSDIR/$ns ]] || continue
    wait_for 10 ns_empty "$ns" || log "processes still in $ns: $(ip netns pids "$ns" | tr '\n' ' ')"
    ip netns del "$ns" 2>/dev/null || true
  done
  local i
  for i in 0 1 2 3; do ip link del "ftv$i" 2>/dev/null || true; done
  ip link del $BR 2>/dev/null || true
  rm -rf "$D"
}

ns_empty() { [[ -z $(ip netns pids "$1" 2>/dev/null) ]]; }

kill_tree() {
  local pid=$1 sig=$2 child
  for child in $(pgrep -P "$pid" 2>/dev/null); do kill_tree "$child" "$sig"; done
  kill -"$sig" "$pid" 2>/dev/null || true
}

status() {
  [[ -e $D/run/slurmctld.daemon && -e $NSDIR/ftctl ]] || { echo "rig: down"; return 1; }
  ctl sinfo -N || return 1
}

cmd=${1:-}
shift || true
case $cmd in
  start) start ;;
  stop) stop ;;
  status) status ;;
  run) [[ -e $NSDIR/ftctl ]] || { log "not running"; exit 1; }
       SLURM_CONF=$D/etc/ftctl/slurm.conf exec nsenter --net="$NSDIR/ftctl" "$@" ;;
  node) ns=$1; shift; exec nsenter --net="$NSDIR/$ns" "$@" ;;
  *) echo "usage: $0 start|stop|status|run CMD...|node NAME CMD..." >&2; exit 2 ;;
esac
