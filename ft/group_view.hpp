// What the fault-tolerance protocols see of a group: its size, this
// process's member number, and which members this process knows to have
// failed. mpi/ implements it over a communicator; the simulator
// (ft/sim/) and the unit tests implement it over plain vectors.
//
// The protocols in ft/ (agreement.hpp, revoke.hpp, topology.hpp) take a view
// for each event and never keep it: knowledge of failures only grows between
// calls, and nothing else about a group changes.
#pragma once

#include <vector>

namespace ftmpi::ft {

class GroupView {
public:
    virtual ~GroupView() = default;
    virtual int size() const = 0;
    virtual int self() const = 0;
    // This process knows member r (0 <= r < size) to have failed.
    virtual bool failed(int r) const = 0;
    // The members this process knows to have failed, ascending.
    virtual std::vector<int> known_failed() const = 0;
    // False only if no member is known failed (may be true when none of
    // them is: it selects the failure-free fast path).
    virtual bool any_failed() const { return !known_failed().empty(); }
};

}  // namespace ftmpi::ft
