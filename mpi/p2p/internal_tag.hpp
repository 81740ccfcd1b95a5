// The tags of the library's own traffic on a communicator's collective
// context (the odd context ids): every internal tag is made and read here,
// with the field widths below; nowhere else shifts or masks one.
//
//   bit  30     poison: the sender saw an error during the operation and
//               carries it on (matching ignores the bit there)
//   bit  29     cross: the leaders' exchange of an inter-communicator's
//               creation or of a connection, not a collective of the
//               communicator (the 2011 API's collective gating skips it)
//   bit  28     error: with poison, the sender's error was not a failure
//               (matching ignores the bit there)
//   bits 5..27  sequence (23 bits). A collective's: the communicator's
//               count of internal operations, whose top 7 bits are the
//               validate epoch (MPI_Comm_validate restarts the count at
//               its epoch, so members agree on it whatever they did
//               before). A cross tag's: what names the exchange.
//   bits 0..4   step: the messages of one operation (tag, tag + 1, ...)
//
// The whole fits the wire's tag field (transport::max_tag, 31 bits).
#pragma once

#include <cstdint>

#include "transport/match_bits.hpp"

namespace ftmpi::mpi {

namespace itag {

inline constexpr unsigned step_width = 5;
inline constexpr unsigned seq_width = 23;
inline constexpr unsigned epoch_width = 7;                        // the top of the sequence
inline constexpr unsigned count_width = seq_width - epoch_width;  // operations within an epoch
inline constexpr unsigned seq_shift = step_width;
inline constexpr unsigned error_bit = seq_shift + seq_width;
inline constexpr unsigned cross_bit = error_bit + 1;
inline constexpr unsigned poison_bit = cross_bit + 1;

inline constexpr std::uint32_t step_mask = (std::uint32_t{1} << step_width) - 1;
inline constexpr std::uint32_t seq_mask = (std::uint32_t{1} << seq_width) - 1;
inline constexpr std::uint32_t epoch_mask = (std::uint32_t{1} << epoch_width) - 1;

static_assert(poison_bit < transport::bits::tag_width, "every internal tag bit fits the wire's tag field");
static_assert(count_width >= 16, "an epoch holds at least 65,536 operations");

// A tag with this sequence and step (no flag).
constexpr int make(std::uint32_t seq, std::uint32_t step = 0) {
    return static_cast<int>(((seq & seq_mask) << seq_shift) | (step & step_mask));
}
constexpr std::uint32_t seq_of(int tag) { return (static_cast<std::uint32_t>(tag) >> seq_shift) & seq_mask; }
constexpr std::uint32_t step_of(int tag) { return static_cast<std::uint32_t>(tag) & step_mask; }

// Validate epochs: the first sequence number of `epoch`, and a tag's epoch.
constexpr std::uint32_t epoch_start(std::uint32_t epoch) { return (epoch & epoch_mask) << count_width; }
constexpr std::uint32_t epoch_of(int tag) { return seq_of(tag) >> count_width; }
constexpr std::uint32_t epoch_number(std::uint64_t n) { return static_cast<std::uint32_t>(n) & epoch_mask; }

}  // namespace itag

// Flags (see above).
inline constexpr std::int32_t k_coll_poison = std::int32_t{1} << itag::poison_bit;
inline constexpr std::int32_t k_cross_tag = std::int32_t{1} << itag::cross_bit;
inline constexpr std::int32_t k_coll_error = std::int32_t{1} << itag::error_bit;

namespace itag {

// A cross tag (leaders' exchanges): `name` in the sequence field.
constexpr int cross(std::uint32_t name, std::uint32_t step = 0) { return k_cross_tag | make(name, step); }
constexpr bool is_cross(int tag) { return (tag & k_cross_tag) != 0; }

// MPI_Comm_create_group's exchanges run on the parent's collective context,
// named by the user's tag: its low 20 bits under bit 21 of the sequence.
// They can equal a parent collective's sequence only in the epochs with
// that bit (32-63, 96-127) after 2^16 collectives less than the tag.
inline constexpr unsigned group_tag_width = 20;
constexpr std::uint32_t group_seq(int user_tag) {
    return (std::uint32_t{1} << (seq_width - 2)) |
           (static_cast<std::uint32_t>(user_tag) & ((std::uint32_t{1} << group_tag_width) - 1));
}
static_assert(group_tag_width < seq_width - 2);

// Intercomm_create's leaders' exchange over peer_comm: the user's tag (its
// low 15 bits) names it.
inline constexpr unsigned leader_tag_width = 15;
constexpr int leader(int user_tag) {
    return cross(static_cast<std::uint32_t>(user_tag) & ((std::uint32_t{1} << leader_tag_width) - 1));
}
static_assert(leader_tag_width < seq_width);

}  // namespace itag

}  // namespace ftmpi::mpi
