#include <catch2/catch.hpp>

#include <cstdint>

#include "mpi/p2p/internal_tag.hpp"
#include "mpi/p2p/matching.hpp"

using namespace ftmpi::mpi;

TEST_CASE("internal tags: every field round-trips and stays in its bits", "[mpi][internal_tag]") {
    const std::uint32_t seqs[] = {0, 1, 31, 65535, 65536, itag::seq_mask - 1, itag::seq_mask};
    for (std::uint32_t seq : seqs)
        for (std::uint32_t step = 0; step <= itag::step_mask; ++step) {
            const int tag = itag::make(seq, step);
            CHECK(tag >= 0);
            CHECK(tag <= ftmpi::transport::max_tag);
            CHECK(itag::seq_of(tag) == seq);
            CHECK(itag::step_of(tag) == step);
            CHECK((tag & (k_coll_poison | k_cross_tag | k_coll_error)) == 0);
            // a flag leaves the fields alone
            const int flagged = tag | k_coll_poison | k_coll_error;
            CHECK(itag::seq_of(flagged) == seq);
            CHECK(itag::step_of(flagged) == step);
            CHECK(poison_of(flagged) == MPI_ERR_OTHER);
            CHECK(poison_of(tag | k_coll_poison) == MPI_ERR_PROC_FAILED);
            CHECK(poison_of(tag) == MPI_SUCCESS);
        }
    // a sequence wider than its field wraps, never reaching a flag
    CHECK(itag::make(itag::seq_mask + 1) == 0);
    CHECK((itag::make(0xffffffffu, 0xffffffffu) & (k_coll_poison | k_cross_tag | k_coll_error)) == 0);
}

TEST_CASE("internal tags: every validate epoch survives in a collective's tag", "[mpi][internal_tag]") {
    // MPI_Comm_validate numbers epochs by its agreement's sequence; each
    // restarts the collective count there, and a tag must say its epoch
    // for every count an epoch holds (the top bit of epoch 128 and above
    // was once lost to the error flag).
    for (std::uint64_t n = 0; n < 1000; ++n) {
        const std::uint32_t epoch = itag::epoch_number(n);
        const std::uint32_t first = itag::epoch_start(epoch);
        for (std::uint32_t count : {0u, 1u, 4095u, (1u << itag::count_width) - 1})
            for (std::uint32_t step : {0u, itag::step_mask}) {
                const int tag = itag::make(first + count, step);
                CHECK(itag::epoch_of(tag) == epoch);
                CHECK(itag::epoch_of(poisoned_tag(tag, MPI_ERR_OTHER)) == epoch);
                CHECK(!itag::is_cross(tag));
            }
    }
    CHECK(itag::epoch_number(128) != itag::epoch_number(127));
}

TEST_CASE("internal tags: cross tags are apart from collectives", "[mpi][internal_tag]") {
    for (int user : {0, 1, 2, 77, 32767, 32768, 1 << 20, ftmpi::transport::max_tag}) {
        const int t = itag::leader(user);
        CHECK(itag::is_cross(t));
        CHECK(itag::seq_of(t) == (static_cast<std::uint32_t>(user) & 0x7fffu));
        CHECK(itag::step_of(t) == 0);
        CHECK(t <= ftmpi::transport::max_tag);
        CHECK(!itag::is_cross(itag::make(itag::group_seq(user))));
        CHECK((itag::group_seq(user) & ~itag::seq_mask) == 0);
    }
}
