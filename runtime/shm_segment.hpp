// Shared-memory segments in /dev/shm that processes of one node map
// (one-sided windows: mpi/rma). Named like every other region of this
// process (runtime/shm_names.hpp), so the launcher or the task keeper
// removes them when the process dies.
#pragma once

#include <cstddef>
#include <string>

namespace ftmpi::runtime {

struct Segment {
    std::string name;      // in /dev/shm, without the slash
    void *addr = nullptr;  // nullptr: none (size 0, or it failed)
    std::size_t size = 0;
};

// A new zero-filled segment of `size` bytes (at least one page is mapped),
// mapped read-write. addr is null when it cannot be made (errno set).
Segment create_segment(std::size_t size);

// Maps another process's segment `name` of `size` bytes. Null on failure.
void *map_segment(const std::string &name, std::size_t size);

// Unmaps `addr` (`size` bytes, as mapped); no-op on null.
void unmap_segment(void *addr, std::size_t size);

// Removes the name (mappings stay valid until unmapped).
void unlink_segment(const std::string &name);

}  // namespace ftmpi::runtime
