// Internals of the recovery calls, shared by the files that adapt ft/'s
// protocols to communicators:
//   ft_channel.cpp  the fault-tolerance channel: communicators by context
//                   slot, messages that arrive before their communicator,
//                   freed communicators kept to answer late requests
//   revoke.cpp      revoke (ft/revoke.hpp): delivery and the calls
//   agree.cpp       the agreement (ft/agreement.hpp): instances per
//                   communicator, agree/iagree, internal agreements, finalize
//   shrink.cpp      shrink/ishrink from an agreement's outcome
//   validate.cpp    the 2011 validate family from an agreement's outcome
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ft/group_view.hpp"
#include "mpi/objects.hpp"

namespace ftmpi::mpi {

// ---- ft_channel.cpp --------------------------------------------------------
// Message kinds on a communicator's fault-tolerance context (the tag).
enum FtTag : int { revoke_tag = 1, agree_tag = 2 };

// Sends `body` to comm rank `peer` on c's fault-tolerance context, prefixed
// by c's uid (which names the communicator at the receiver); never blocks,
// and the request frees itself.
void ft_send(MPI_Comm c, int peer, int tag, const void *body, std::size_t len);
// The same, with the body (`len` bytes) written in place by `write`.
void ft_send(MPI_Comm c, int peer, int tag, std::size_t len, const std::function<void(char *)> &write);

// c as ft/ sees it: its members, and the failures this process knows among them.
class CommView final : public ft::GroupView {
public:
    explicit CommView(MPI_Comm c) : c_(c) {}
    int size() const override;
    int self() const override;
    bool failed(int r) const override;
    std::vector<int> known_failed() const override;
    bool any_failed() const override;

private:
    MPI_Comm c_;
};

// ---- revoke.cpp -------------------------------------------------------------
// Marks c revoked (once), fails its pending operations with MPI_ERR_REVOKED,
// and notifies its BMG neighbours.
void revoke_local(MPI_Comm c);

// ---- agree.cpp ---------------------------------------------------------------
// An agreement's outcome as the MPI layer uses it, valid until the next
// agreement on the communicator starts (its words are the decision's own).
struct Agreed {
    std::uint64_t seq = 0;
    std::span<const std::uint64_t> words;  // the AND of the contributions
    std::vector<int> failed;               // agreed failures: process ids, ascending
    std::uint64_t nonce = 0;               // fresh, the same at every member (names what a shrink creates)
};

// Which numbering an agreement takes: the users' recovery calls (agree,
// shrink, validate), which every survivor makes in the same order; internal
// ones (creations, file sync), numbered apart so that a member that skipped a
// creation never pairs its next agree with the others' creation; and
// MPI_Finalize's single instance.
enum class Sequence { user, internal, finalize };

// Blocks until the next agreement on c is decided.
Agreed run_agreement(MPI_Comm c, std::vector<std::uint64_t> words, Sequence sequence = Sequence::user,
                     bool abortable = false);
// The nonblocking calls (iagree, ishrink, Icomm_validate): a request on
// `comm` that completes, with the class `on_decided` returns, once the next
// agreement on `view` is decided.
MPI_Request agreement_request(MPI_Comm comm, MPI_Comm view, std::vector<std::uint64_t> words,
                              std::function<int(const Agreed &)> on_decided);
// Internal agreements entered out of call order (nonblocking creations,
// whose steps finish in any order): reserve_internal takes `n` consecutive
// numbers of c's internal sequence now, in the order the members make the
// call; start_internal enters number `base + i` with `flag` (abortable, as
// creations are), and `on_decided` runs once it is decided.
std::uint64_t reserve_internal(MPI_Comm c, std::uint64_t n);
void start_internal(MPI_Comm c, std::uint64_t number, int flag, std::function<void(const Agreed &)> on_decided);
// A message on c's fault-tolerance context with tag agree_tag.
void on_agree_message(MPI_Comm c, int from, const void *body, std::size_t len);
// c's revoke: its creations' agreements fail (ft::Agreements::abort).
void abort_creations(MPI_Comm c);
// Whether c's agreements decided anything (then c lingers when freed), and
// dropping them (when it stops lingering).
bool agreements_decided(MPI_Comm c);
void forget_agreements(MPI_Comm c);
// New failures: every communicator's agreements re-route.
void agreements_on_failures();

inline std::vector<std::uint64_t> flag_words(int flag) { return {static_cast<std::uint32_t>(flag)}; }
inline int flag_of(const Agreed &a) {
    return a.words.empty() ? 0 : static_cast<int>(static_cast<std::uint32_t>(a.words[0]));
}

// Where revoke, agree and shrink run: the communicator, or an
// inter-communicator's view over both groups.
inline MPI_Comm ft_view(MPI_Comm c) { return c->inter ? c->ft : c; }

// Argument checks of the recovery calls: any communicator, or an
// intra-communicator only (MPI_ERR_UNSUPPORTED_OPERATION otherwise).
int check_any(const char *call, MPI_Comm comm);
int check_intra(const char *call, MPI_Comm comm);

}  // namespace ftmpi::mpi
