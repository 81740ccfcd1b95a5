// The daemons' tree (tree.hpp).
#include "tree.hpp"

#include <algorithm>

namespace ftmpi::launcher {

Tree::Tree(int nodes, int fanout) {
    const int n = std::max(0, nodes), f = std::max(1, fanout);
    parent_.resize(static_cast<size_t>(n) + 1);
    alive_.assign(static_cast<size_t>(n) + 1, true);
    parent_[0] = -1;
    for (int v = 1; v <= n; ++v) parent_[static_cast<size_t>(v)] = (v - 1) / f;
}

bool Tree::alive(int v) const { return v >= 0 && v < vertices() && alive_[static_cast<size_t>(v)]; }

int Tree::parent(int v) const { return alive(v) ? parent_[static_cast<size_t>(v)] : -1; }

std::vector<int> Tree::children(int v) const {
    std::vector<int> out;
    if (!alive(v)) return out;
    for (int c = 1; c < vertices(); ++c)
        if (alive_[static_cast<size_t>(c)] && parent_[static_cast<size_t>(c)] == v) out.push_back(c);
    return out;
}

int Tree::depth(int v) const {
    int d = 0;
    for (; v > 0; v = parent(v)) ++d;
    return d;
}

int Tree::next_hop(int self, int dst) const {
    if (!alive(self) || !alive(dst)) return -1;
    if (dst == self) return self;
    // dst below self: the child whose subtree holds it (walk dst up to a child of self)
    for (int w = dst; w > 0; w = parent(w))
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

void Tree::lose(int v) {
    if (v <= 0 || !alive(v)) return;
    for (int c : children(v)) parent_[static_cast<size_t>(c)] = 0;
    alive_[static_cast<size_t>(v)] = false;
    parent_[static_cast<size_t>(v)] = -1;
}

void Tree::reparent(int v, int p) {
    if (v <= 0 || !alive(v) || !alive(p) || p == v) return;
    for (int w = p; w > 0; w = parent(w))
        if (w == v) return;  // p is below v: that would cut the subtree off
    parent_[static_cast<size_t>(v)] = p;
}

}  // namespace ftmpi::launcher
