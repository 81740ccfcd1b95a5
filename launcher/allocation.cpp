// A Slurm allocation and the placement of ranks on its nodes (allocation.hpp).
#include "allocation.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

#include "error.hpp"

namespace ftmpi::launcher {
namespace {

int number(const std::string &s, const std::string &what) {
    if (s.empty() || s.size() > 9) throw UsageError(what);
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) throw UsageError(what);
    return std::stoi(s);
}

// The names of one host expression ("ftn[1-2]x[01-02]"), bracket groups multiplied.
void expand_one(const std::string &expr, std::size_t from, const std::string &prefix, std::vector<std::string> &out,
                const std::string &whole) {
    const std::size_t open = expr.find('[', from);
    if (open == std::string::npos) {
        out.push_back(prefix + expr.substr(from));
        return;
    }
    const std::size_t close = expr.find(']', open);
    const std::string bad = "malformed host list '" + whole + "'";
    if (close == std::string::npos) throw UsageError(bad);
    const std::string head = prefix + expr.substr(from, open - from);
    const std::string ranges = expr.substr(open + 1, close - open - 1);
    std::size_t pos = 0;
    while (pos <= ranges.size()) {
        const std::size_t comma = ranges.find(',', pos);
        const std::string r = ranges.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        const std::size_t dash = r.find('-');
        const std::string lo = r.substr(0, dash), hi = dash == std::string::npos ? lo : r.substr(dash + 1);
        const int a = number(lo, bad), b = number(hi, bad);
        if (b < a || b - a > 100000) throw UsageError(bad);
        for (int v = a; v <= b; ++v) {
            std::string digits = std::to_string(v);
            if (digits.size() < lo.size()) digits.insert(0, lo.size() - digits.size(), '0');  // zero padding
            expand_one(expr, close + 1, head + digits, out, whole);
        }
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string &list) {
    std::vector<std::string> out;
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i <= list.size(); ++i) {
        const char c = i < list.size() ? list[i] : ',';
        if (c == '[') ++depth;
        if (c == ']') --depth;
        if (depth < 0 || depth > 1) throw UsageError("malformed host list '" + list + "'");
        if (c != ',' || depth != 0) continue;
        const std::string expr = list.substr(start, i - start);
        if (expr.empty()) throw UsageError("malformed host list '" + list + "'");
        expand_one(expr, 0, "", out, list);
        start = i + 1;
    }
    if (depth != 0) throw UsageError("malformed host list '" + list + "'");
    return out;
}

std::vector<int> expand_counts(const std::string &counts) {
    std::vector<int> out;
    const std::string bad = "malformed per-node counts '" + counts + "'";
    std::size_t pos = 0;
    while (pos <= counts.size()) {
        const std::size_t comma = counts.find(',', pos);
        const std::string item = counts.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        const std::size_t paren = item.find("(x");
        int n = 0, times = 1;
        if (paren == std::string::npos) {
            n = number(item, bad);
        } else {
            if (item.back() != ')') throw UsageError(bad);
            n = number(item.substr(0, paren), bad);
            times = number(item.substr(paren + 2, item.size() - paren - 3), bad);
        }
        if (times > 100000) throw UsageError(bad);
        out.insert(out.end(), static_cast<std::size_t>(times), n);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return out;
}

std::vector<AllocNode> slurm_allocation(const std::function<const char *(const char *)> &get) {
    const char *list = get("SLURM_JOB_NODELIST");
    if (list == nullptr || *list == '\0') return {};
    std::vector<AllocNode> nodes;
    for (std::string &name : expand_hostlist(list)) nodes.push_back({std::move(name), 1});
    const char *counts = get("SLURM_TASKS_PER_NODE");
    if (counts == nullptr || *counts == '\0') counts = get("SLURM_JOB_CPUS_PER_NODE");
    if (counts != nullptr && *counts != '\0') {
        const std::vector<int> slots = expand_counts(counts);
        if (slots.size() == nodes.size())
            for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i].slots = std::max(1, slots[i]);
    }
    return nodes;
}

std::optional<std::size_t> this_node(const std::vector<AllocNode> &nodes,
                                     const std::function<const char *(const char *)> &get) {
    const char *me = get("SLURMD_NODENAME");
    if (me == nullptr) return std::nullopt;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].name == me) return i;
    return std::nullopt;
}

std::vector<int> plan_nodes(int np, const std::vector<AllocNode> &nodes, NodeMap map, int ppn) {
    const int k = static_cast<int>(nodes.size());
    std::vector<int> node_of;
    node_of.reserve(static_cast<std::size_t>(np > 0 ? np : 0));
    if (k == 0 || np <= 0) return node_of;
    if (ppn > 0) {
        if (np > ppn * k)
            throw UsageError("-n " + std::to_string(np) + " asks for more ranks than " + std::to_string(ppn) +
                             " per node on " + std::to_string(k) + " node" + (k == 1 ? "" : "s"));
        for (int r = 0; r < np; ++r) node_of.push_back(map == NodeMap::kNode ? r % k : r / ppn);
        return node_of;
    }
    if (map == NodeMap::kNode) {
        for (int r = 0; r < np; ++r) node_of.push_back(r % k);
        return node_of;
    }
    // kSlot: each node's share, its slots while they last, beyond them in
    // proportion to the slots (largest remainders first, ties to the earlier node)
    long total = 0;
    for (const AllocNode &n : nodes) total += n.slots;
    std::vector<long> share(nodes.size());
    if (np <= total) {
        long left = np;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            share[i] = std::min<long>(nodes[i].slots, left);
            left -= share[i];
        }
    } else {
        std::vector<std::pair<long, std::size_t>> rem;
        long given = 0;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            share[i] = static_cast<long>(np) * nodes[i].slots / total;
            given += share[i];
            rem.push_back({-(static_cast<long>(np) * nodes[i].slots % total), i});
        }
        std::sort(rem.begin(), rem.end());
        for (std::size_t j = 0; given < np; ++j, ++given) ++share[rem[j % rem.size()].second];
    }
    for (std::size_t i = 0; i < nodes.size(); ++i)
        node_of.insert(node_of.end(), static_cast<std::size_t>(share[i]), static_cast<int>(i));
    return node_of;
}

}  // namespace ftmpi::launcher
