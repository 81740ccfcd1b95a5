// The overlays the fault-tolerance protocols run on, as pure functions of a
// group's size, a member and a failure predicate (`failed(r)`: this process
// knows member r failed).
//
// Binomial graph (BMG, spec 003): member r is linked to r ± 2^k (mod n) for
// every 2^k < n. Degree and diameter are O(log n), and failures rarely cut
// it: a notice that each member forwards to its live BMG neighbours on first
// receipt (revoke, the detector's failure broadcast, MPI_Finalize's decision)
// reaches every live member in O(log n) steps.
//
// Binomial tree (the agreement, ft/agreement.hpp): rooted at member 0, the
// parent of r > 0 is r with its lowest set bit cleared, so every ancestor of
// r is below r. Under failures a member's parent is its nearest ancestor not
// known failed; a member with no live ancestor attaches to the root, the
// lowest member not known failed. Depth and the root's degree are O(log n).
//
// Observation ring (the detector): member r watches the nearest live member
// before it and beats to the nearest live member after it (cyclically).
#pragma once

#include <algorithm>
#include <vector>

namespace ftmpi::ft {

// Live BMG neighbours of `self` among n members, ascending, without self.
template <class Failed>
std::vector<int> bmg_neighbours(int n, int self, Failed failed) {
    std::vector<int> out;
    for (long k = 1; k < n; k *= 2)
        for (long peer : {(self + k) % n, (self - k % n + n) % n})
            if (peer != self && !failed(static_cast<int>(peer))) out.push_back(static_cast<int>(peer));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// The binomial tree: r's parent (-1 for the root 0) and its children.
inline int tree_parent(int r) { return r == 0 ? -1 : (r & (r - 1)); }

template <class Fn>
void for_tree_children(int n, int r, Fn fn) {
    const long low = r == 0 ? static_cast<long>(n) : static_cast<long>(r & -r);
    for (long k = 1; k < low && r + k < n; k *= 2) fn(static_cast<int>(r + k));
}

// The lowest member not known failed (the agreement's root); -1 if none.
template <class Failed>
int lowest_live(int n, Failed failed) {
    for (int r = 0; r < n; ++r)
        if (!failed(r)) return r;
    return -1;
}

// Where `self` sends up the tree: its nearest ancestor not known failed,
// else the root. -1 when self is the root.
template <class Failed>
int live_parent(int n, int self, Failed failed) {
    for (int a = tree_parent(self); a >= 0; a = tree_parent(a))
        if (!failed(a)) return a;
    const int root = lowest_live(n, failed);
    return root == self ? -1 : root;
}

// The members that send up to `self` (those whose live_parent is self, as
// far as self knows), ascending: its tree descendants reached through
// failed members only, and, at the root, every member with no live ancestor.
template <class Failed>
std::vector<int> live_children(int n, int self, Failed failed) {
    std::vector<int> out, stack;
    auto below = [&](int r) {
        for_tree_children(n, r, [&](int c) { stack.push_back(c); });
        while (!stack.empty()) {
            const int c = stack.back();
            stack.pop_back();
            if (c == self) continue;
            if (!failed(c)) out.push_back(c);
            else for_tree_children(n, c, [&](int g) { stack.push_back(g); });
        }
    };
    below(self);
    // At the root: the orphans, live members all of whose ancestors failed
    // (reached from 0 through failed members; self's subtree is not crossed).
    if (self != 0 && lowest_live(n, failed) == self) below(0);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// The observation ring: the nearest member before (pred) or after (succ)
// self, cyclically, for which `alive` holds; -1 if none.
template <class Alive>
int ring_pred(int n, int self, Alive alive) {
    for (int i = 1; i < n; ++i)
        if (alive((self - i + n) % n)) return (self - i + n) % n;
    return -1;
}
template <class Alive>
int ring_succ(int n, int self, Alive alive) {
    for (int i = 1; i < n; ++i)
        if (alive((self + i) % n)) return (self + i) % n;
    return -1;
}

}  // namespace ftmpi::ft
