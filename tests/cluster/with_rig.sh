#!/usr/bin/env bash
# with_rig.sh CMD...: starts the emulated cluster (rig.sh), runs CMD where srun
# reaches it (the controller's namespace, SLURM_CONF set), then stops the rig,
# whatever happened (trap), so nothing is left running. Exit status: CMD's; 77
# (skip) when this machine cannot host the rig; 1 when a task of the job was
# still alive after CMD ended.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rig=$here/rig.sh

"$rig" start
rc=$?
if ((rc == 77)); then
  echo "SKIP: the cluster suite needs root, Slurm 22.05 and network namespaces (see the rig's message above)"
  exit 77
fi
trap '"$rig" stop' EXIT
trap 'exit 143' TERM INT
((rc == 0)) || { echo "FAIL: the rig did not start"; exit 1; }

marker=$(mktemp /tmp/ftmpi-rig-marker.XXXXXX)
"$rig" run "$@"
rc=$?

# Tasks of the job must not outlive srun (slurmstepd may take a moment to
# reap them). Poll, with a deadline, for processes in the nodes' namespaces
# other than the Slurm daemons.
leftovers() {
  local ns pid comm
  for ns in ftn1 ftn2 ftn3; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
      [[ $comm == slurmd || $comm == slurmstepd ]] || echo "$ns:$pid:$comm"
    done
  done
}
deadline=$((SECONDS + 10))
left=$(leftovers)
while [[ -n $left ]] && ((SECONDS < deadline)); do
  sleep 0.2  # polling for slurmstepd to reap its tasks, bounded above
  left=$(leftovers)
done
if [[ -n $left ]]; then
  echo "FAIL: job processes still running after the command ended: $left"
  ((rc == 0)) && rc=1
fi
# A killed rank's keeper removes its shm regions (runtime/task_keeper.hpp),
# but without a keeper (FTMPI_SLURM_KEEPER=0) or with the keeper killed too
# (a lost node, an aborted or cancelled step) nothing does until the next
# job's MPI_Init sweeps them: remove the regions this job's processes left,
# those whose process is gone. 16 MiB each in /dev/shm.
while IFS= read -r f; do
  pid=${f#/dev/shm/ftmpi-}
  pid=${pid%%-*}
  # Gone, or a zombie not reaped yet (a killed keeper's rank, reparented).
  if ! kill -0 "$pid" 2>/dev/null || grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null; then
    rm -f "$f"
  fi
done < <(find /dev/shm -maxdepth 1 -name 'ftmpi-*' -newer "$marker")
rm -f "$marker"
exit $rc
