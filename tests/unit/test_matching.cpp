#include <catch2/catch.hpp>

#include "mpi/p2p/matching.hpp"

using namespace ftmpi::mpi;

namespace {
ftmpi_request_s recv(int source, int tag) {
    ftmpi_request_s r{};
    r.kind = ftmpi_request_s::Kind::recv;
    r.peer = source;
    r.tag = tag;
    return r;
}
std::unique_ptr<Unexpected> msg(int source, int tag) {
    auto u = std::make_unique<Unexpected>();
    u->source_rank = source;
    u->tag = tag;
    u->length = 0;
    u->rendezvous = false;
    return u;
}
}  // namespace

TEST_CASE("wildcards match by the MPI rules", "[mpi][matching]") {
    CHECK(matches(MPI_ANY_SOURCE, MPI_ANY_TAG, 3, 9));
    CHECK(matches(3, MPI_ANY_TAG, 3, 9));
    CHECK(matches(MPI_ANY_SOURCE, 9, 3, 9));
    CHECK_FALSE(matches(2, MPI_ANY_TAG, 3, 9));
    CHECK_FALSE(matches(MPI_ANY_SOURCE, 8, 3, 9));
}

TEST_CASE("an arrival completes the earliest posted receive that matches", "[mpi][matching]") {
    MatchQueue q;
    auto named = recv(2, 5), any_src = recv(MPI_ANY_SOURCE, 5), any_tag = recv(1, MPI_ANY_TAG),
         both = recv(MPI_ANY_SOURCE, MPI_ANY_TAG);
    q.post(&named);
    q.post(&any_src);
    q.post(&any_tag);
    q.post(&both);
    CHECK(q.take_posted(1, 5) == &any_src);  // named(2) skipped, any_src is earlier than any_tag
    CHECK(q.take_posted(1, 5) == &any_tag);
    CHECK(q.take_posted(2, 5) == &named);
    CHECK(q.take_posted(7, 1) == &both);
    CHECK(q.take_posted(2, 5) == nullptr);
}

TEST_CASE("a receive takes the earliest unexpected message that matches", "[mpi][matching]") {
    MatchQueue q;
    q.add_unexpected(msg(1, 1));
    q.add_unexpected(msg(2, 1));
    q.add_unexpected(msg(1, 2));
    q.add_unexpected(msg(1, 1));
    REQUIRE(q.peek_unexpected(1, 2) != nullptr);
    auto a = q.take_unexpected(1, 2);
    REQUIRE(a);
    CHECK(a->tag == 2);
    auto b = q.take_unexpected(MPI_ANY_SOURCE, 1);
    REQUIRE(b);
    CHECK(b->source_rank == 1);
    auto c = q.take_unexpected(MPI_ANY_SOURCE, MPI_ANY_TAG);
    REQUIRE(c);
    CHECK(c->source_rank == 2);
    auto d = q.take_unexpected(1, MPI_ANY_TAG);
    REQUIRE(d);
    CHECK(d->source_rank == 1);
    CHECK(q.peek_unexpected(MPI_ANY_SOURCE, MPI_ANY_TAG) == nullptr);
}

TEST_CASE("a cancelled receive leaves the queue and keeps the order of the rest", "[mpi][matching]") {
    MatchQueue q;
    auto a = recv(1, 1), b = recv(1, 1), c = recv(1, 1);
    q.post(&a);
    q.post(&b);
    q.post(&c);
    CHECK(q.remove_posted(&b));
    CHECK_FALSE(q.remove_posted(&b));
    CHECK(q.take_posted(1, 1) == &a);
    CHECK(q.take_posted(1, 1) == &c);
}
