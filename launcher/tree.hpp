// The launcher's daemons as a tree (ftmpirun across nodes): the head is
// vertex 0, the allocation's node i is vertex i + 1, and vertex v's parent is
// at first (v - 1) / fanout, so launch, wire-up and events cross O(log n)
// links. When a vertex is lost its children hang on the head directly
// (lose), and a vertex that reattached elsewhere moves there (reparent):
// every vertex applies the same changes in the same order (the head floods
// them), so all agree on the tree. Routing and flooding follow the current
// parents. No I/O: unit-tested (tests/unit/test_launcher_wire.cpp).
#pragma once

#include <vector>

namespace ftmpi::launcher {

class Tree {
public:
    // `nodes` daemons (vertices 1..nodes) under the head; fanout >= 1.
    Tree(int nodes, int fanout);
    int vertices() const { return static_cast<int>(parent_.size()); }
    int parent(int v) const;                 // -1 for the head and for a lost vertex
    std::vector<int> children(int v) const;  // live ones, in order
    int depth(int v) const;                  // links between v and the head
    bool alive(int v) const;
    // The neighbour of `self` on the way to `dst` (self itself when dst ==
    // self); -1 when dst is lost or not a vertex.
    int next_hop(int self, int dst) const;
    // Where `self` passes on a flood that reached it from `from` (-1: it
    // started there): every tree neighbour but `from`, so each vertex gets it once.
    std::vector<int> flood_to(int self, int from) const;
    // Vertex v is lost: its children now hang on the head.
    void lose(int v);
    // Live vertex v now hangs on live vertex p (not one of v's descendants).
    void reparent(int v, int p);

private:
    std::vector<int> parent_;  // by vertex; -1: the head, or lost
    std::vector<bool> alive_;
};

}  // namespace ftmpi::launcher
