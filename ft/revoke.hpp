// Revoke (spec 003, "logarithmic revoke"): a non-uniform reliable broadcast
// over the binomial graph. The first time a member learns that its group is
// revoked, from its own call or a peer's notice, it delivers the revoke and
// sends one notice to each live BMG neighbour; later notices change nothing.
// Every live member hears of it within O(log n) steps of the first, around
// failed forwarders. Pure: mpi/ulfm/revoke.cpp delivers it (fails pending
// operations) and sends the notices; ft/sim/ runs it at scale.
#pragma once

#include <vector>

#include "ft/group_view.hpp"
#include "ft/topology.hpp"

namespace ftmpi::ft {

// A revoke notice (or the member's own revoke) for a group whose revoked
// flag is `revoked`: sets it, and returns the members to notify (none when
// it was set already).
inline std::vector<int> revoke_notice(bool &revoked, const GroupView &v) {
    if (revoked) return {};
    revoked = true;
    return bmg_neighbours(v.size(), v.self(), [&](int r) { return v.failed(r); });
}

}  // namespace ftmpi::ft
