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

}  // namespace ftmpi::runtime
