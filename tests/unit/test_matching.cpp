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

namespace {
// An eager arrival of one byte `c` for (context, uid), from rank 1 with tag 5.
ftmpi::transport::Arrival arrive(std::uint32_t context, std::uint64_t uid, const char &c) {
    return ftmpi::transport::Arrival{context, uid, 5, 1, 0, 1, &c, false, 0, {}};
}
}  // namespace

TEST_CASE("a message matches only on the communicator it was sent on", "[mpi][matching]") {
    Engine e;
    const char x = 'x', y = 'y', z = 'z';
    MatchQueue *old = e.open(10, 111);
    CHECK_FALSE(e.on_arrival(arrive(10, 111, x)));  // unexpected: no posted receive took it
    CHECK(old->peek_unexpected(1, 5) != nullptr);
    e.close(old);  // MPI_Comm_free: its unexpected messages go
    CHECK(old->peek_unexpected(1, 5) == nullptr);
    e.on_arrival(arrive(10, 111, x));  // a late message of the freed communicator: dropped at once
    CHECK(e.held() == 0);
    e.on_arrival(arrive(10, 222, y));  // for a communicator not created here yet: kept
    e.on_arrival(arrive(10, 99, z));   // of an older communicator: kept until the context is taken
    e.on_arrival(arrive(12, 333, z));  // another context: untouched by what follows
    CHECK(e.held() == 3);
    MatchQueue *next = e.open(10, 222);
    CHECK(e.held() == 1);
    auto u = next->take_unexpected(MPI_ANY_SOURCE, MPI_ANY_TAG);
    REQUIRE(u);
    CHECK(u->data.size() == 1);
    CHECK(u->data[0] == 'y');
    CHECK(next->take_unexpected(MPI_ANY_SOURCE, MPI_ANY_TAG) == nullptr);
    e.on_arrival(arrive(10, 111, x));  // while a queue is open, another uid on its context is stale
    CHECK(next->peek_unexpected(MPI_ANY_SOURCE, MPI_ANY_TAG) == nullptr);
    CHECK(e.held() == 1);
    e.destroy(old);
    e.destroy(next);
    CHECK(e.queues().empty());
}

TEST_CASE("a freed communicator's pending receive still takes its own messages", "[mpi][matching]") {
    Engine e;
    const char x = 'x', y = 'y';
    char got = 0;
    MatchQueue *old = e.open(20, 7);
    auto r = recv(1, 5);
    r.datatype = MPI_BYTE;
    r.buf = &got;
    r.count = 1;
    r.capacity = 1;
    old->post(&r);
    r.posted = true;
    e.close(old);
    MatchQueue *next = e.open(20, 8);             // the context is taken again
    CHECK_FALSE(e.on_arrival(arrive(20, 8, y)));  // the new communicator's message stays with it
    CHECK_FALSE(r.complete);
    CHECK(next->peek_unexpected(1, 5) != nullptr);
    CHECK(e.on_arrival(arrive(20, 7, x)));  // the old one's completes the pending receive (a posted receive took it)
    CHECK(r.complete);
    CHECK(got == 'x');
    e.destroy(old);
    e.destroy(next);
}
