#include "runtime/sockets.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>

namespace ftmpi::runtime {

int disable_nagle_on_tcp_sockets() {
    int changed = 0;
    DIR *d = ::opendir("/proc/self/fd");
    if (!d) return 0;
    const int dfd = ::dirfd(d);
    while (dirent *e = ::readdir(d)) {
        char *end = nullptr;
        long fd = std::strtol(e->d_name, &end, 10);
        if (*end != '\0' || fd == dfd || fd < 0) continue;
        struct stat st {};
        if (::fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        int domain = 0, type = 0, on = 0;
        socklen_t len = sizeof domain;
        if (::getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) continue;
        if (domain != AF_INET && domain != AF_INET6) continue;
        len = sizeof type;
        if (::getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) continue;
        len = sizeof on;
        if (::getsockopt(static_cast<int>(fd), IPPROTO_TCP, TCP_NODELAY, &on, &len) == 0 && on) continue;
        on = 1;
        if (::setsockopt(static_cast<int>(fd), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) == 0) ++changed;
    }
    ::closedir(d);
    return changed;
}

}  // namespace ftmpi::runtime
