#include "runtime/shm_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/shm_names.hpp"

namespace ftmpi::runtime {
namespace {

std::size_t mapped_size(std::size_t size) { return size > 0 ? size : 1; }

}  // namespace

Segment create_segment(std::size_t size) {
    Segment s;
    s.name = new_shm_region_name();
    s.size = size;
    const int fd = shm_open(("/" + s.name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return s;
    if (ftruncate(fd, static_cast<off_t>(mapped_size(size))) == 0) {
        void *p = mmap(nullptr, mapped_size(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) s.addr = p;
    }
    close(fd);
    if (s.addr == nullptr) unlink_segment(s.name);
    return s;
}

void *map_segment(const std::string &name, std::size_t size) {
    const int fd = shm_open(("/" + name).c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) return nullptr;
    void *p = mmap(nullptr, mapped_size(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? nullptr : p;
}

void unmap_segment(void *addr, std::size_t size) {
    if (addr != nullptr) munmap(addr, mapped_size(size));
}

void unlink_segment(const std::string &name) { shm_unlink(("/" + name).c_str()); }

}  // namespace ftmpi::runtime
