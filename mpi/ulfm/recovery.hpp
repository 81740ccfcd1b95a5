// Recovery (revoke, agreement, shrink, validate) as the rest of the MPI layer
// uses it. The protocols are in ft/ (agreement.hpp, revoke.hpp); the files
// that adapt them to communicators are listed in recovery_internal.hpp.
//
// Their messages travel on a communicator's fault-tolerance context
// (k_ft_context | slot), which a revoke does not close, and are handled by
// the progress engine as they arrive rather than matched against receives:
// a process answers agreement requests and forwards revokes whenever it
// drives progress, also for agreements it has already returned from.
#pragma once

#include <cstdint>
#include <vector>

#include "mpi/objects.hpp"
#include "transport/transport.hpp"

namespace ftmpi::mpi {

inline constexpr std::uint32_t k_ft_context = 1u << 28;

inline bool is_ft_context(std::uint32_t context) { return context >= k_ft_context; }

// Communicators by context slot, so that a message names its communicator.
void register_comm(MPI_Comm c);
void unregister_comm(MPI_Comm c);

// A message on a fault-tolerance context (Engine::on_arrival).
void on_ft_message(const transport::Arrival &a);

// Progress thread, after new failures: agreements re-route around the failed (ft/agreement.hpp).
void recovery_on_failures();

// The agreement of MPIX_Comm_agree among c's members (also on a revoked c),
// for internal uses: *flag becomes the AND over the live members. Never fails.
// With `agreed_failed`, also the agreed failures (job ranks, ascending).
// Internal agreements are numbered apart from the users' agree and shrink.
// `abortable`: a revoke of c ends it (*flag 0) without waiting for members
// that will never call it: the uniformity of a creation over c, which fails
// on a revoked c; a file's sync, which a revoke of the file preempts.
void agree_internal(MPI_Comm c, int *flag, std::vector<int> *agreed_failed = nullptr, bool abortable = false);

// MPI_Finalize's closing step: an agreement over MPI_COMM_WORLD's live
// members (its own instance), so that no process leaves while another may
// still need it to answer for an agreement it coordinated.
void finalize_agreement();

// At the end of MPI_Finalize: deletes the freed communicators kept to answer
// late agreement requests (no member can still send one).
void release_lingering();

}  // namespace ftmpi::mpi
