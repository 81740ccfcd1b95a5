// Point-to-point matching and collective schedules of the MPI layer, run by
// several simulated processes inside this one over the loopback transport
// (transport/loopback/): no fork, no process manager, no libfabric.
#include <catch2/catch.hpp>

#include <cstring>
#include <numeric>
#include <vector>

#include "ft/failures.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"
#include "mpi/state.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "transport/loopback/loopback_transport.hpp"

using namespace ftmpi;
using namespace ftmpi::mpi;

namespace {

constexpr std::uint32_t k_stride = 64;  // contexts per simulated process
constexpr std::uint32_t k_context = 8;  // the communicator's context in a real job

// `n` simulated processes, each with its copy of one communicator over all
// of them. Owns the library's engine and transport for its lifetime.
class World {
public:
    explicit World(int n, std::size_t eager_limit = 256) : comms_(static_cast<std::size_t>(n)) {
        g.engine = std::make_unique<Engine>();
        g.transport = std::make_unique<transport::LoopbackTransport>(*g.engine, n, k_stride, eager_limit);
        ft::failures().attach(g.transport.get(), n);
        g.initialized = true;
        std::vector<int> procs(static_cast<std::size_t>(n));
        std::iota(procs.begin(), procs.end(), 0);
        for (int r = 0; r < n; ++r) {
            auto &c = comms_[static_cast<std::size_t>(r)];
            c.magic = Magic::comm;
            c.context = k_context + static_cast<std::uint32_t>(r) * k_stride;
            c.uid = 77;
            c.rank = r;
            c.size = n;
            c.procs = procs;
            c.queue = g.engine->open(c.context, c.uid);
            c.coll_queue = g.engine->open(c.context + 1, c.uid);
            c.errhandler = MPI_ERRORS_RETURN;
            c.predefined = true;  // never freed: the test owns the objects
        }
    }
    ~World() {
        while (g.transport->busy()) progress();
        // What MPI_Finalize releases: requests kept for reuse, objects kept
        // for messages still expected.
        release_lingering();
        free_request_pool();
        g.initialized = false;
        ft::failures().attach(nullptr, 0);
        g.transport.reset();
        g.engine.reset();
    }
    MPI_Comm operator[](int r) { return &comms_[static_cast<std::size_t>(r)]; }
    int size() const { return static_cast<int>(comms_.size()); }

    // Drives progress until every request completes (a bounded number of
    // polls: the loopback transport delivers everything queued in one).
    int wait_all(std::vector<MPI_Request> &reqs, std::vector<MPI_Status> *statuses = nullptr) {
        std::vector<MPI_Status> st(reqs.size());
        int flag = 0;
        for (int turn = 0; turn < 10000 && !flag; ++turn) {
            const int err = MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &flag, st.data());
            if (err != MPI_SUCCESS) return err;
        }
        if (statuses) *statuses = st;
        return flag ? MPI_SUCCESS : MPI_ERR_PENDING;
    }

private:
    std::vector<ftmpi_comm_s> comms_;
};

std::vector<int> ramp(int n, int from) {
    std::vector<int> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), from);
    return v;
}

}  // namespace

TEST_CASE("loopback: wildcard receives match in posting order, pair by pair", "[loopback][matching]") {
    World w(3);
    // Ranks 1 and 2 each send tags 5, 6, 5 to rank 0 before it posts anything.
    std::vector<MPI_Request> reqs;
    int payload[2][3];
    for (int s = 1; s <= 2; ++s)
        for (int i = 0; i < 3; ++i) {
            payload[s - 1][i] = 100 * s + i;
            MPI_Request r;
            REQUIRE(MPI_Isend(&payload[s - 1][i], 1, MPI_INT, 0, i == 1 ? 6 : 5, w[s], &r) == MPI_SUCCESS);
            reqs.push_back(r);
        }
    REQUIRE(w.wait_all(reqs) == MPI_SUCCESS);  // eager: done at once, now unexpected at rank 0
    // A named receive of tag 6 from 2 skips rank 2's earlier tag 5.
    int got = -1;
    MPI_Status st;
    REQUIRE(MPI_Recv(&got, 1, MPI_INT, 2, 6, w[0], &st) == MPI_SUCCESS);
    CHECK(got == 201);
    // Wildcards take the earliest arrivals: rank 1's messages in its order.
    std::vector<int> seen;
    for (int i = 0; i < 5; ++i) {
        REQUIRE(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, w[0], &st) == MPI_SUCCESS);
        CHECK(st.MPI_TAG == (got % 100 == 1 ? 6 : 5));
        CHECK(st.MPI_SOURCE == got / 100);
        seen.push_back(got);
    }
    std::vector<int> from1, from2;
    for (int v : seen) (v / 100 == 1 ? from1 : from2).push_back(v);
    CHECK(from1 == std::vector<int>{100, 101, 102});
    CHECK(from2 == std::vector<int>{200, 202});
}

TEST_CASE("loopback: rendezvous sends complete only when matched, and truncation is reported", "[loopback][matching]") {
    World w(2, 64);
    auto big = ramp(1000, 7);  // 4000 bytes: rendezvous
    MPI_Request s;
    REQUIRE(MPI_Issend(big.data(), 1000, MPI_INT, 1, 3, w[0], &s) == MPI_SUCCESS);
    int flag = 1;
    for (int i = 0; i < 5; ++i) REQUIRE(MPI_Test(&s, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK_FALSE(flag);  // no receive posted yet
    std::vector<int> in(1000, -1);
    MPI_Request r;
    REQUIRE(MPI_Irecv(in.data(), 1000, MPI_INT, 0, 3, w[1], &r) == MPI_SUCCESS);
    std::vector<MPI_Request> both{s, r};
    std::vector<MPI_Status> st;
    REQUIRE(w.wait_all(both, &st) == MPI_SUCCESS);
    CHECK(in == big);
    int count = 0;
    MPI_Get_count(&st[1], MPI_INT, &count);
    CHECK(count == 1000);

    // Longer than the receive buffer: MPI_ERR_TRUNCATE, the buffer's worth delivered.
    REQUIRE(MPI_Isend(big.data(), 1000, MPI_INT, 1, 4, w[0], &s) == MPI_SUCCESS);
    std::vector<int> small(10, -1);
    MPI_Status rs;
    CHECK(MPI_Recv(small.data(), 10, MPI_INT, 0, 4, w[1], &rs) == MPI_ERR_TRUNCATE);
    CHECK(std::equal(small.begin(), small.end(), big.begin()));
    REQUIRE(MPI_Wait(&s, MPI_STATUS_IGNORE) == MPI_SUCCESS);
}

TEST_CASE("loopback: a failed peer fails the operations with it", "[loopback][matching]") {
    World w(3, 64);
    auto big = ramp(100, 0);
    MPI_Request s;
    REQUIRE(MPI_Isend(big.data(), 100, MPI_INT, 2, 1, w[0], &s) == MPI_SUCCESS);  // rendezvous, never matched
    g.transport->mark_failed(2);
    int flag = 0;
    MPI_Status st;
    const int err = MPI_Test(&s, &flag, &st);
    CHECK(flag);
    CHECK((err == MPI_ERR_PROC_FAILED || (err == MPI_ERR_IN_STATUS && st.MPI_ERROR == MPI_ERR_PROC_FAILED)));
    int x = 0;
    CHECK(MPI_Send(&x, 1, MPI_INT, 2, 1, w[0]) == MPI_ERR_PROC_FAILED);
}

TEST_CASE("loopback: allreduce and reduce schedules at sizes 1 to 7", "[loopback][coll]") {
    for (int n = 1; n <= 7; ++n)
        for (int count : {1, 5, 1000}) {
            World w(n);
            std::vector<std::vector<int>> in, out(static_cast<std::size_t>(n)), red(static_cast<std::size_t>(n));
            std::vector<MPI_Request> reqs(2 * static_cast<std::size_t>(n));
            for (int r = 0; r < n; ++r) in.push_back(ramp(count, r * 10));
            const int root = n / 2;
            for (int r = 0; r < n; ++r) {
                auto u = static_cast<std::size_t>(r);
                out[u].assign(static_cast<std::size_t>(count), -1);
                red[u].assign(static_cast<std::size_t>(count), -1);
                REQUIRE(MPI_Iallreduce(in[u].data(), out[u].data(), count, MPI_INT, MPI_SUM, w[r], &reqs[u]) ==
                        MPI_SUCCESS);
                REQUIRE(MPI_Ireduce(in[u].data(), red[u].data(), count, MPI_INT, MPI_MAX, root, w[r],
                                    &reqs[u + static_cast<std::size_t>(n)]) == MPI_SUCCESS);
            }
            REQUIRE(w.wait_all(reqs) == MPI_SUCCESS);
            INFO("n " << n << " count " << count);
            for (int r = 0; r < n; ++r)
                for (int i = 0; i < count; ++i) {
                    // sum over r of (r*10 + i)
                    CHECK(out[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)] ==
                          n * i + 10 * n * (n - 1) / 2);
                }
            for (int i = 0; i < count; ++i)
                CHECK(red[static_cast<std::size_t>(root)][static_cast<std::size_t>(i)] == (n - 1) * 10 + i);
        }
}

TEST_CASE("loopback: bcast and allgather schedules, the collectives in the same order at every rank",
          "[loopback][coll]") {
    for (int n : {2, 3, 4, 6}) {
        World w(n, 128);
        const int count = 300;  // rendezvous-sized pieces
        std::vector<std::vector<int>> buf(static_cast<std::size_t>(n)), all(static_cast<std::size_t>(n)), mine;
        std::vector<MPI_Request> reqs;
        const int root = n - 1;
        for (int r = 0; r < n; ++r) {
            auto u = static_cast<std::size_t>(r);
            buf[u] = r == root ? ramp(count, 1000) : std::vector<int>(count, -1);
            all[u].assign(static_cast<std::size_t>(n * count), -1);
            mine.push_back(ramp(count, r * count));  // lives until the wait below
        }
        // Two collectives in flight on one communicator: tags keep them apart.
        for (int r = 0; r < n; ++r) {
            auto u = static_cast<std::size_t>(r);
            MPI_Request b, a;
            REQUIRE(MPI_Ibcast(buf[u].data(), count, MPI_INT, root, w[r], &b) == MPI_SUCCESS);
            REQUIRE(MPI_Iallgather(mine[u].data(), count, MPI_INT, all[u].data(), count, MPI_INT, w[r], &a) ==
                    MPI_SUCCESS);
            reqs.push_back(b);
            reqs.push_back(a);
        }
        REQUIRE(w.wait_all(reqs) == MPI_SUCCESS);
        INFO("n " << n);
        for (int r = 0; r < n; ++r) {
            CHECK(buf[static_cast<std::size_t>(r)] == ramp(count, 1000));
            CHECK(all[static_cast<std::size_t>(r)] == ramp(n * count, 0));
        }
    }
}
