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
// Tree (the agreement, ft/agreement.hpp): a k-nomial tree rooted at member
// 0 (below). Under failures a member's parent is its nearest ancestor not
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

// The tree: a k-nomial tree of radix k_tree_radix rooted at 0. Member r's
// parent is r with its lowest nonzero base-k digit cleared (-1 for the root
// 0), so every ancestor of r is below r. Up to k_tree_radix members it is
// flat (everyone's parent is 0: two message latencies per agreement); beyond,
// its depth is ceil(log_k n) and a member has at most (k-1) log_k n children.
inline constexpr int k_tree_radix = 8;

inline int tree_parent(int r) {
    if (r == 0) return -1;
    long place = 1;
    while ((r / place) % k_tree_radix == 0) place *= k_tree_radix;
    return static_cast<int>(r - ((r / place) % k_tree_radix) * place);
}

template <class Fn>
void for_tree_children(int n, int r, Fn fn) {
    long low = 1;  // the place of r's lowest nonzero digit; children differ below it
    if (r == 0) low = static_cast<long>(n) + 1;
    else
        while ((r / low) % k_tree_radix == 0) low *= k_tree_radix;
    for (long place = 1; place < low && r + place < n; place *= k_tree_radix)
        for (long j = 1; j < k_tree_radix && r + j * place < n; ++j) fn(static_cast<int>(r + j * place));
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
// far as self knows), ascending when none failed: its tree descendants reached through
// failed members only, and, at the root, every member with no live ancestor.
template <class Failed>
void live_children(int n, int self, Failed failed, std::vector<int> &out) {
    out.clear();
    // The live members below `top`, reached through failed members only
    // (never crossing self).
    auto below = [&](int top) {
        int stack[64];  // failed members still to descend: at most (k-1) per level on a path
        int depth = 0;
        std::vector<int> more;  // overflow, for very wide failed regions
        auto visit = [&](int c) {
            if (c == self) return;
            if (!failed(c)) out.push_back(c);
            else if (depth < 64) stack[depth++] = c;
            else more.push_back(c);
        };
        for_tree_children(n, top, visit);
        while (depth > 0 || !more.empty()) {
            int c;
            if (depth > 0) c = stack[--depth];
            else c = more.back(), more.pop_back();
            for_tree_children(n, c, visit);
        }
    };
    below(self);
    // At the root: the orphans, live members all of whose ancestors failed.
    if (self != 0 && failed(0) && lowest_live(n, failed) == self) below(0);
}
template <class Failed>
std::vector<int> live_children(int n, int self, Failed failed) {
    std::vector<int> out;
    live_children(n, self, failed, out);
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
