// The launcher's daemons as a tree (ftmpirun across nodes): the head is
// vertex 0, the allocation's node i is vertex i + 1, and vertex v's parent is
// (v - 1) / fanout, so launch, wire-up and events cross O(log n) links.
// Pure arithmetic, no state: routing and flooding on it are unit-tested
// (tests/unit/test_placement.cpp).
#pragma once

#include <vector>

namespace ftmpi::launcher {

class Tree {
public:
    // `nodes` daemons (vertices 1..nodes) under the head; fanout >= 1.
    Tree(int nodes, int fanout);
    int vertices() const { return nodes_ + 1; }
    int parent(int v) const;                 // -1 for the head
    std::vector<int> children(int v) const;  // in order
    int depth(int v) const;                  // links between v and the head
    // The neighbour of `self` on the way to `dst` (self itself when dst == self).
    int next_hop(int self, int dst) const;
    // Where `self` passes on a flood that reached it from `from` (-1: it
    // started there): every tree neighbour but `from`, so each vertex gets it once.
    std::vector<int> flood_to(int self, int from) const;

private:
    int nodes_;
    int fanout_;
};

}  // namespace ftmpi::launcher
