#include "hosts.hpp"

#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "error.hpp"
#include "options.hpp"

namespace ftmpi::launcher {
namespace {

std::string trim(const std::string &s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// "host" or "host:N".
HostEntry parse_host(const std::string &item, const std::string &where) {
    HostEntry h;
    h.origin = where;
    const auto colon = item.rfind(':');
    // An IPv6 address ("::1") has several colons and no slot count.
    if (colon != std::string::npos && item.find(':') == colon) {
        h.name = item.substr(0, colon);
        h.slots = parse_count(where + ": slot count", item.substr(colon + 1));
    } else {
        h.name = item;
    }
    if (h.name.empty()) throw UsageError(where + ": empty host name");
    return h;
}

}  // namespace

std::vector<HostEntry> parse_host_list(const std::string &text, const std::string &opt) {
    std::vector<HostEntry> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(parse_host(trim(item), opt));
    if (out.empty()) throw UsageError(opt + " expects HOST[:SLOTS][,HOST...], got '" + text + "'");
    return out;
}

std::vector<HostEntry> read_hostfile(const std::string &path) {
    std::ifstream in(path);
    if (!in) throw UsageError("cannot read hostfile '" + path + "': " + std::strerror(errno));
    std::vector<HostEntry> out;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        const std::string where = path + ":" + std::to_string(n);
        line = trim(line.substr(0, line.find('#')));
        if (line.empty()) continue;
        std::stringstream words(line);
        std::string first, word;
        words >> first;
        HostEntry h = parse_host(first, where);
        while (words >> word) {
            if (word.rfind("slots=", 0) == 0 && !h.slots) {
                h.slots = parse_count(where + ": slot count", word.substr(6));
            } else {
                throw UsageError(where + ": unexpected '" + word + "' (expected 'host', 'host slots=N' or 'host:N')");
            }
        }
        out.push_back(std::move(h));
    }
    if (out.empty()) throw UsageError("hostfile '" + path + "' names no host");
    return out;
}

bool is_this_node(const std::string &name) {
    const std::string n = lower(name);
    if (n == "localhost" || n == "::1" || n.rfind("127.", 0) == 0) return true;
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return false;
    const std::string host = lower(buf);
    if (n == host || n == host.substr(0, host.find('.'))) return true;
    if (n.find('.') == std::string::npos) return false;
    // The fully qualified name, as the resolver gives it.
    addrinfo hints{};
    hints.ai_flags = AI_CANONNAME;
    addrinfo *res = nullptr;
    if (::getaddrinfo(buf, nullptr, &hints, &res) != 0 || res == nullptr) return false;
    const bool same = res->ai_canonname != nullptr && n == lower(res->ai_canonname);
    ::freeaddrinfo(res);
    return same;
}

int check_hosts_local(const std::vector<HostEntry> &hosts) {
    int slots = 0;
    for (const HostEntry &h : hosts) {
        if (!is_this_node(h.name))
            throw UsageError(h.origin + ": host '" + h.name +
                             "' is not this node; outside a Slurm allocation ftmpirun starts jobs on this node only "
                             "(salloc or sbatch: across the allocation's nodes)");
        slots += h.slots.value_or(1);
    }
    return slots;
}

}  // namespace ftmpi::launcher
