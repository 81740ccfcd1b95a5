#include "runtime/sockets.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

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

std::vector<in_addr_t> node_addresses() {
    std::vector<in_addr_t> out;
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) != 0) return out;
    for (ifaddrs *i = list; i != nullptr; i = i->ifa_next)
        if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) != 0 &&
            (i->ifa_flags & IFF_LOOPBACK) == 0)
            out.push_back(reinterpret_cast<const sockaddr_in *>(i->ifa_addr)->sin_addr.s_addr);
    ::freeifaddrs(list);
    return out;
}

// (connect() on a UDP socket sends nothing)
std::string iface_towards(in_addr_t peer) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return {};
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(9);
    to.sin_addr.s_addr = peer;
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const bool routed = ::connect(fd, reinterpret_cast<const sockaddr *>(&to), sizeof to) == 0 &&
                        ::getsockname(fd, reinterpret_cast<sockaddr *>(&from), &len) == 0;
    ::close(fd);
    if (!routed) return {};
    std::string name;
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) != 0) return {};
    for (ifaddrs *i = list; i != nullptr && name.empty(); i = i->ifa_next)
        if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_LOOPBACK) == 0 &&
            reinterpret_cast<const sockaddr_in *>(i->ifa_addr)->sin_addr.s_addr == from.sin_addr.s_addr)
            name = i->ifa_name;
    ::freeifaddrs(list);
    return name;
}

}  // namespace ftmpi::runtime
