// The daemons' tree (tree.hpp).
#include "tree.hpp"

#include <algorithm>

namespace ftmpi::launcher {

Tree::Tree(int nodes, int fanout) : nodes_(std::max(0, nodes)), fanout_(std::max(1, fanout)) {}

int Tree::parent(int v) const { return v <= 0 ? -1 : (v - 1) / fanout_; }

std::vector<int> Tree::children(int v) const {
    std::vector<int> out;
    for (long c = static_cast<long>(v) * fanout_ + 1; c <= static_cast<long>(v) * fanout_ + fanout_ && c <= nodes_; ++c)
        out.push_back(static_cast<int>(c));
    return out;
}

int Tree::depth(int v) const {
    int d = 0;
    for (; v > 0; v = parent(v)) ++d;
    return d;
}

int Tree::next_hop(int self, int dst) const {
    if (dst == self) return self;
    // dst below self: the child whose subtree holds it (walk dst up to a child of self)
    for (int w = dst; w > self; w = parent(w))
        if (parent(w) == self) return w;
    return parent(self);
}

std::vector<int> Tree::flood_to(int self, int from) const {
    std::vector<int> out;
    if (parent(self) >= 0 && parent(self) != from) out.push_back(parent(self));
    for (int c : children(self))
        if (c != from) out.push_back(c);
    return out;
}

}  // namespace ftmpi::launcher
