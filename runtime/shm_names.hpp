// Names of this job's shared-memory objects in /dev/shm.
//
// libfabric's shm provider names an endpoint's region "<pid>:<uid>:<idx>" by
// default. A rank killed by a signal leaves its region behind, and a later
// process that gets the same pid then fails in fi_enable with EBUSY. ftmpi names
// every region "ftmpi-<pid>-<random>" instead, and the launcher removes a dead
// rank's regions by its pid.
#pragma once

#include <sys/types.h>

#include <string>

namespace ftmpi::runtime {

// A fresh, collision-free region name for this process.
std::string new_shm_region_name();

// Removes every region a process with `pid` created. Returns how many.
int remove_shm_regions_of(pid_t pid);

// Whether `pid` names no live process: none at all, or a zombie.
bool process_gone(pid_t pid);

// The state letter of /proc/PID/stat ('R', 'S', 'T' stopped, 'Z', ...);
// '\0' when there is no such process.
char process_state(pid_t pid);

// Removes this user's regions whose process is gone (no such pid, or a
// zombie): those of a job whose processes were all killed at once, which no
// survivor, launcher or task keeper was left to remove (a cancelled or
// aborted srun step, a lost node). Returns how many. Assumes the processes
// that share /dev/shm share this pid namespace.
int remove_stale_shm_regions();

}  // namespace ftmpi::runtime
