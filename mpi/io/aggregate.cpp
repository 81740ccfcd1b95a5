// MPI-IO: two-phase collective data access (collective buffering).
//
// A collective read or write whose pieces interleave (many small runs from
// every process, e.g. a block-distributed array) is done by a few
// aggregators, each owning one contiguous file domain of the accesses'
// union:
//   1. every member's summary (outcome, span, runs, bytes) is gathered and
//      each member decides the same thing from it: two-phase or each its own
//      access (file.hpp's two_phase contract);
//   2. every member sends each aggregator the list of its runs inside that
//      aggregator's domain;
//   3. in rounds of at most cb_buffer_size bytes of each domain, data moves
//      to the aggregators (write) and each writes its window with as few
//      pwritev calls as the coverage allows, or each aggregator reads its
//      window's covered span with one pread and sends the pieces back (read).
// A member's pieces inside one window are one contiguous slice of its data
// (runs are sorted by offset), so members send and receive straight from and
// into their data; only the aggregator gathers.
//
// Writes touch only the bytes some member wrote (the window's covered runs,
// merged): no read-modify-write, so bytes in holes are never read or
// rewritten (nothing for a concurrent writer of the holes to lose, no lock,
// and files opened MPI_MODE_WRONLY need no special case). The merging across members is what turns the
// small interleaved pieces into large requests. Reads read the covered span
// whole (data sieving): extra bytes read from holes are harmless.
//
// Hints (ROMIO's names, so existing programs' hints apply): romio_cb_write /
// romio_cb_read = enable | disable | automatic (default), cb_nodes (number
// of aggregators; default every member: on one node the page cache takes
// writes from every core in parallel), cb_buffer_size (bytes per aggregator
// per round; default 16 MiB).
//
// Exchanges use the library's point-to-point on the file's hidden
// communicator's collective context (never matched by user traffic). A
// failed peer makes the exchanges with it fail (MPI_ERR_PROC_FAILED) without
// stopping the others: every member runs every round, so none waits for a
// message that is never sent, and the call ends with that class.
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mpi/comm/comm_internal.hpp"
#include "mpi/io/file.hpp"
#include "mpi/p2p/matching.hpp"
#include "mpi/p2p/requests.hpp"

namespace ftmpi::mpi {
namespace {

constexpr std::size_t k_default_buffer = std::size_t{16} << 20;
constexpr std::size_t k_max_buffer = std::size_t{1} << 30;  // one message's byte count is an int
// Automatic mode: interleaved accesses whose mean run is below this go
// through the aggregators; larger runs are already efficient requests. On
// one node (benchmarks/io_bw.c, /tmp, 2 cores): 1.3 KiB runs at 8 ranks
// write 1.8x faster through the aggregators, 64 KiB runs at 4 ranks read
// 13x faster independently.
constexpr std::size_t k_small_run = std::size_t{16} << 10;
constexpr MPI_Offset k_domain_align = 4096;

enum class Mode { automatic, enable, disable };

const std::string *hint(const ftmpi_file_s &f, const char *key) {
    for (const auto &[k, v] : f.info)
        if (k == key) return &v;
    return nullptr;
}

Mode mode_hint(const ftmpi_file_s &f, bool write) {
    const std::string *v = hint(f, write ? "romio_cb_write" : "romio_cb_read");
    if (v == nullptr) return Mode::automatic;
    if (*v == "enable") return Mode::enable;
    if (*v == "disable") return Mode::disable;
    return Mode::automatic;
}

// A positive integer hint, or `fallback` when absent or malformed.
long long number_hint(const ftmpi_file_s &f, const char *key, long long fallback) {
    const std::string *v = hint(f, key);
    if (v == nullptr) return fallback;
    char *end = nullptr;
    const long long n = std::strtoll(v->c_str(), &end, 10);
    return end != v->c_str() && *end == '\0' && n > 0 ? n : fallback;
}

// What each member tells the others first.
struct Summary {
    int err;        // its outcome so far
    int sorted;     // runs in increasing offset order, not overlapping
    MPI_Offset lo;  // span of its runs (lo == hi: no data)
    MPI_Offset hi;
    long long runs;
    long long bytes;
};

// Runs and the data bytes before each: which slice of the data a file
// window holds.
struct RunList {
    const Extent *runs = nullptr;
    std::size_t n = 0;
    std::vector<std::size_t> before;  // n + 1 entries

    RunList(const Extent *r, std::size_t count) : runs(r), n(count), before(count + 1, 0) {
        for (std::size_t i = 0; i < n; ++i) before[i + 1] = before[i] + runs[i].len;
    }
    // The index range [*first, *last) of the runs meeting [w0, w1), and the
    // data range [*d0, *d1) of their bytes inside it.
    void clip(MPI_Offset w0, MPI_Offset w1, std::size_t *first, std::size_t *last, std::size_t *d0,
              std::size_t *d1) const {
        const Extent *end = runs + n;
        const Extent *a = std::partition_point(
            runs, end, [w0](const Extent &e) { return e.off + static_cast<MPI_Offset>(e.len) <= w0; });
        const Extent *b = std::partition_point(a, end, [w1](const Extent &e) { return e.off < w1; });
        *first = static_cast<std::size_t>(a - runs);
        *last = static_cast<std::size_t>(b - runs);
        if (a == b) {
            *d0 = *d1 = 0;
            return;
        }
        *d0 = before[*first] + static_cast<std::size_t>(std::max<MPI_Offset>(w0 - a->off, 0));
        const Extent &l = b[-1];
        const MPI_Offset l_end = l.off + static_cast<MPI_Offset>(l.len);
        *d1 = before[*last] - static_cast<std::size_t>(std::max<MPI_Offset>(l_end - w1, 0));
    }
};

// Pending point-to-point operations of one round on the collective context.
class Exchange {
public:
    Exchange(MPI_Comm team, int tag) : team_(team), tag_(tag) {}
    Exchange(const Exchange &) = delete;
    Exchange &operator=(const Exchange &) = delete;
    ~Exchange() { finish(); }
    void send(int peer, const void *buf, std::size_t bytes) { post(ftmpi_request_s::Kind::send, peer, buf, bytes); }
    void recv(int peer, void *buf, std::size_t bytes) { post(ftmpi_request_s::Kind::recv, peer, buf, bytes); }
    // Waits for every operation; the first error class among them.
    int finish() {
        int err = MPI_SUCCESS;
        for (MPI_Request &r : reqs_) {
            wait_complete(r);
            MPI_Status st{};
            const bool recv = r->kind == ftmpi_request_s::Kind::recv;
            int e = retire_request(&r, &st);
            if (e == MPI_SUCCESS && recv) e = poison_of(st.MPI_TAG);
            if (err == MPI_SUCCESS) err = e;
        }
        reqs_.clear();
        return err;
    }

private:
    void post(ftmpi_request_s::Kind kind, int peer, const void *buf, std::size_t bytes) {
        MPI_Request r =
            new_request(kind, team_, buf, static_cast<int>(bytes), MPI_BYTE, peer, tag_, team_->context + 1);
        if (kind == ftmpi_request_s::Kind::send) start_send(r);
        else start_recv(r);
        reqs_.push_back(r);
    }
    MPI_Comm team_;
    int tag_;
    std::vector<MPI_Request> reqs_;
};

// Writes `len` bytes from the iovecs at `off`; 0 or an errno.
int write_iov(int fd, std::vector<iovec> &iov, MPI_Offset off) {
    std::size_t i = 0;
    while (i < iov.size()) {
        const int cnt = static_cast<int>(std::min<std::size_t>(iov.size() - i, IOV_MAX));
        const ssize_t n = ::pwritev(fd, iov.data() + i, cnt, static_cast<off_t>(off));
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) return EIO;
        off += n;
        auto left = static_cast<std::size_t>(n);
        while (i < iov.size() && left >= iov[i].iov_len) left -= iov[i++].iov_len;
        if (left > 0) {
            iov[i].iov_base = static_cast<char *>(iov[i].iov_base) + left;
            iov[i].iov_len -= left;
        }
    }
    return 0;
}

// Reads up to `len` bytes at `off` into buf; *got: bytes before the end of
// the file. 0 or an errno.
int read_span(int fd, char *buf, std::size_t len, MPI_Offset off, std::size_t *got) {
    *got = 0;
    while (*got < len) {
        const ssize_t n = ::pread(fd, buf + *got, len - *got, static_cast<off_t>(off) + static_cast<off_t>(*got));
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) break;
        *got += static_cast<std::size_t>(n);
    }
    return 0;
}

// One piece an aggregator handles in a window: file bytes and where they are.
struct FilePiece {
    MPI_Offset off;
    std::size_t len;
    char *at;
};

// The collective plan every member computed alike.
struct Plan {
    std::vector<int> aggregators;  // ranks
    MPI_Offset lo = 0;             // first domain's start
    MPI_Offset domain = 0;         // domain length (the last is cut at hi)
    MPI_Offset hi = 0;
    std::size_t buffer = 0;  // window length
    long long rounds = 0;

    MPI_Offset dom_lo(std::size_t a) const { return std::min(hi, lo + static_cast<MPI_Offset>(a) * domain); }
    MPI_Offset dom_hi(std::size_t a) const { return std::min(hi, lo + static_cast<MPI_Offset>(a + 1) * domain); }
    // Aggregator a's window of round r: [*w0, *w1) (empty past its domain).
    void window(std::size_t a, long long r, MPI_Offset *w0, MPI_Offset *w1) const {
        *w0 = std::min(dom_hi(a), dom_lo(a) + static_cast<MPI_Offset>(r) * static_cast<MPI_Offset>(buffer));
        *w1 = std::min(dom_hi(a), *w0 + static_cast<MPI_Offset>(buffer));
    }
};

// Decides from the summaries (the same at every member). False: each member
// does its own access.
bool make_plan(const ftmpi_file_s &f, bool write, const std::vector<Summary> &all, Plan *plan) {
    const Mode mode = mode_hint(f, write);
    if (mode == Mode::disable || f.atomic) return false;
    MPI_Offset lo = 0, hi = 0;
    long long runs = 0, bytes = 0;
    bool any = false;
    for (const Summary &s : all) {
        if (s.err != MPI_SUCCESS || s.sorted == 0) return false;
        // One message carries a member's list for one aggregator.
        if (s.runs > INT_MAX / static_cast<long long>(sizeof(Extent))) return false;
        if (s.hi <= s.lo) continue;
        lo = any ? std::min(lo, s.lo) : s.lo;
        hi = any ? std::max(hi, s.hi) : s.hi;
        any = true;
        runs += s.runs;
        bytes += s.bytes;
    }
    if (!any) return false;
    if (mode == Mode::automatic) {
        // Interleaved: some member's span meets another's.
        std::vector<std::pair<MPI_Offset, MPI_Offset>> spans;
        for (const Summary &s : all)
            if (s.hi > s.lo) spans.emplace_back(s.lo, s.hi);
        std::sort(spans.begin(), spans.end());
        bool interleaved = false;
        for (std::size_t i = 1; i < spans.size(); ++i) interleaved |= spans[i].first < spans[i - 1].second;
        if (!interleaved || static_cast<std::size_t>(bytes / runs) >= k_small_run) return false;
    }
    const int size = static_cast<int>(all.size());
    const long long want = number_hint(f, "cb_nodes", size);
    const int n = static_cast<int>(std::min<long long>(want, size));
    // Aggregators spread over the ranks (with one process per core, over the cores).
    plan->aggregators.clear();
    for (int i = 0; i < n; ++i) plan->aggregators.push_back(static_cast<int>(static_cast<long long>(i) * size / n));
    plan->lo = lo;
    plan->hi = hi;
    MPI_Offset domain = (hi - lo + n - 1) / n;
    domain = (domain + k_domain_align - 1) / k_domain_align * k_domain_align;
    plan->domain = domain;
    plan->buffer = static_cast<std::size_t>(
        std::min<long long>(number_hint(f, "cb_buffer_size", static_cast<long long>(k_default_buffer)),
                            static_cast<long long>(k_max_buffer)));
    plan->rounds = static_cast<long long>((domain + static_cast<MPI_Offset>(plan->buffer) - 1) /
                                          static_cast<MPI_Offset>(plan->buffer));
    return true;
}

// Step 2: every member's runs inside each aggregator's domain, at the
// aggregators (`theirs[s]`: member s's runs in this aggregator's domain).
int exchange_lists(MPI_Comm team, const Plan &plan, const RunList &mine, int my_agg,
                   std::vector<std::vector<Extent>> *theirs) {
    const std::size_t naggr = plan.aggregators.size();
    const auto size = static_cast<std::size_t>(team->size);
    // Clipped lists to send, one per aggregator.
    std::vector<std::vector<Extent>> out(naggr);
    std::vector<long long> counts(naggr, 0);
    for (std::size_t a = 0; a < naggr; ++a) {
        const MPI_Offset d0 = plan.dom_lo(a), d1 = plan.dom_hi(a);
        std::size_t first, last, x0, x1;
        mine.clip(d0, d1, &first, &last, &x0, &x1);
        for (std::size_t i = first; i < last; ++i) {
            const MPI_Offset s = std::max(mine.runs[i].off, d0);
            const MPI_Offset e = std::min(mine.runs[i].off + static_cast<MPI_Offset>(mine.runs[i].len), d1);
            out[a].push_back(Extent{s, static_cast<std::size_t>(e - s)});
        }
        counts[a] = static_cast<long long>(out[a].size());
    }
    std::vector<long long> all_counts(size * naggr, 0);
    int err = team_allgather(team, counts.data(), static_cast<int>(sizeof(long long) * naggr), all_counts.data());
    Exchange x(team, next_team_tag(team));
    if (my_agg >= 0) {
        theirs->assign(size, {});
        for (std::size_t s = 0; s < size; ++s) {
            const auto c = static_cast<std::size_t>(all_counts[s * naggr + static_cast<std::size_t>(my_agg)]);
            if (c == 0) continue;
            (*theirs)[s].resize(c);
            if (static_cast<int>(s) == team->rank) (*theirs)[s] = out[static_cast<std::size_t>(my_agg)];
            else x.recv(static_cast<int>(s), (*theirs)[s].data(), c * sizeof(Extent));
        }
    }
    for (std::size_t a = 0; a < naggr; ++a)
        if (!out[a].empty() && plan.aggregators[a] != team->rank)
            x.send(plan.aggregators[a], out[a].data(), out[a].size() * sizeof(Extent));
    const int xerr = x.finish();
    return err != MPI_SUCCESS ? err : xerr;
}

// Step 3, one round. Moves this member's slices to / from the aggregators
// and, at an aggregator, writes or reads its window. *sys: an errno of the
// file system here.
int run_round(ftmpi_file_s &f, bool write, const Plan &plan, long long r, const RunList &mine, char *data, int my_agg,
              const std::vector<RunList> &theirs, std::vector<char> &window, int *sys) {
    MPI_Comm team = f.comm;
    Exchange x(team, next_team_tag(team));
    const std::size_t naggr = plan.aggregators.size();
    // The aggregator's side: each member's slice of this window, back to
    // back in `incoming`, and the pieces it holds.
    MPI_Offset w0 = 0, w1 = 0;
    std::vector<char> incoming;
    std::vector<std::size_t> at(theirs.size() + 1, 0);
    std::vector<FilePiece> pieces;
    if (my_agg >= 0) {
        plan.window(static_cast<std::size_t>(my_agg), r, &w0, &w1);
        for (std::size_t s = 0; s < theirs.size(); ++s) {
            std::size_t first, last, d0, d1;
            theirs[s].clip(w0, w1, &first, &last, &d0, &d1);
            at[s + 1] = at[s] + (d1 - d0);
        }
        incoming.resize(at[theirs.size()]);
        for (std::size_t s = 0; s < theirs.size(); ++s) {
            std::size_t first, last, d0, d1;
            theirs[s].clip(w0, w1, &first, &last, &d0, &d1);
            char *into = incoming.data() + at[s];
            for (std::size_t i = first; i < last; ++i) {
                const Extent &e = theirs[s].runs[i];
                const MPI_Offset p0 = std::max(e.off, w0);
                const MPI_Offset p1 = std::min(e.off + static_cast<MPI_Offset>(e.len), w1);
                pieces.push_back(FilePiece{p0, static_cast<std::size_t>(p1 - p0), into});
                into += p1 - p0;
            }
        }
    }
    if (!write && !pieces.empty()) {
        // Read the covered span with one request, then give each piece its bytes.
        MPI_Offset c0 = pieces.front().off, c1 = c0;
        for (const FilePiece &p : pieces) {
            c0 = std::min(c0, p.off);
            c1 = std::max(c1, p.off + static_cast<MPI_Offset>(p.len));
        }
        std::size_t got = 0;
        const auto span = static_cast<std::size_t>(c1 - c0);
        if (*sys == 0) *sys = read_span(f.fd, window.data(), span, c0, &got);
        std::memset(window.data() + got, 0, span - got);
        for (const FilePiece &p : pieces) std::memcpy(p.at, window.data() + (p.off - c0), p.len);
    }
    for (std::size_t s = 0; s < theirs.size(); ++s) {
        const std::size_t len = at[s + 1] - at[s];
        if (len == 0 || static_cast<int>(s) == team->rank) continue;
        if (write) x.recv(static_cast<int>(s), incoming.data() + at[s], len);
        else x.send(static_cast<int>(s), incoming.data() + at[s], len);
    }
    // The member's side: its slice of each aggregator's window.
    for (std::size_t a = 0; a < naggr; ++a) {
        MPI_Offset v0, v1;
        plan.window(a, r, &v0, &v1);
        if (v1 <= v0) continue;
        std::size_t first, last, d0, d1;
        mine.clip(v0, v1, &first, &last, &d0, &d1);
        if (d1 <= d0) continue;
        if (plan.aggregators[a] == team->rank) {
            const auto self = static_cast<std::size_t>(team->rank);
            if (write) std::memcpy(incoming.data() + at[self], data + d0, d1 - d0);
            else std::memcpy(data + d0, incoming.data() + at[self], d1 - d0);
        } else if (write) {
            x.send(plan.aggregators[a], data + d0, d1 - d0);
        } else {
            x.recv(plan.aggregators[a], data + d0, d1 - d0);
        }
    }
    const int err = x.finish();
    if (!write) return err;
    // Write the window's covered runs: every piece, sorted by offset, each
    // maximal contiguous sequence with one pwritev.
    std::stable_sort(pieces.begin(), pieces.end(),
                     [](const FilePiece &p, const FilePiece &q) { return p.off < q.off; });
    std::vector<iovec> iov;
    MPI_Offset start = 0, end = 0;
    auto flush = [&] {
        if (!iov.empty() && *sys == 0) *sys = write_iov(f.fd, iov, start);
        iov.clear();
    };
    for (const FilePiece &p : pieces) {
        if (iov.empty() || p.off != end) {
            flush();
            start = p.off;
            end = p.off;
        }
        iov.push_back(iovec{p.at, p.len});
        end += static_cast<MPI_Offset>(p.len);
    }
    flush();
    return err;
}

}  // namespace

bool two_phase(ftmpi_file_s &f, bool write, const std::vector<Extent> &runs, char *data, int err, int *cls,
               std::size_t *moved, int *sys) {
    MPI_Comm team = f.comm;
    Summary mine{err, 1, 0, 0, static_cast<long long>(runs.size()), 0};
    for (std::size_t i = 0; i < runs.size(); ++i) {
        mine.bytes += static_cast<long long>(runs[i].len);
        if (i > 0 && runs[i].off < runs[i - 1].off + static_cast<MPI_Offset>(runs[i - 1].len)) mine.sorted = 0;
    }
    if (!runs.empty()) {
        mine.lo = runs.front().off;
        mine.hi = runs.back().off + static_cast<MPI_Offset>(runs.back().len);
    }
    std::vector<Summary> all(static_cast<std::size_t>(team->size));
    // A failed summary exchange fails at every member (it runs through one
    // root, which poisons what it sends after a failure): each does its own
    // access and the call's outcome exchange reports the failure.
    if (team_allgather(team, &mine, static_cast<int>(sizeof mine), all.data()) != MPI_SUCCESS) return false;
    Plan plan;
    if (!make_plan(f, write, all, &plan)) return false;

    *moved = 0;
    *sys = 0;
    // Reads: the data before the end of the file is what arrives (as with
    // independent reads, which stop at the end of the file).
    if (!write) {
        struct stat st {};
        if (::fstat(f.fd, &st) != 0) *sys = errno;
        for (const Extent &e : runs) {
            const MPI_Offset in = std::clamp<MPI_Offset>(st.st_size - e.off, 0, static_cast<MPI_Offset>(e.len));
            *moved += static_cast<std::size_t>(in);
            if (in < static_cast<MPI_Offset>(e.len)) break;
        }
    }
    const RunList my_runs(runs.data(), runs.size());
    int my_agg = -1;
    for (std::size_t a = 0; a < plan.aggregators.size(); ++a)
        if (plan.aggregators[a] == team->rank) my_agg = static_cast<int>(a);
    std::vector<std::vector<Extent>> lists;
    int xerr = exchange_lists(team, plan, my_runs, my_agg, &lists);
    std::vector<RunList> theirs;
    for (const auto &l : lists) theirs.emplace_back(l.data(), l.size());
    std::vector<char> window(my_agg >= 0 && !write ? plan.buffer : 0);
    for (long long r = 0; r < plan.rounds; ++r) {
        const int e = run_round(f, write, plan, r, my_runs, data, my_agg, theirs, window, sys);
        if (xerr == MPI_SUCCESS) xerr = e;
    }
    if (write && *sys == 0 && xerr == MPI_SUCCESS) *moved = static_cast<std::size_t>(mine.bytes);
    *cls = xerr != MPI_SUCCESS ? xerr : (*sys != 0 ? io_error_class(*sys) : MPI_SUCCESS);
    return true;
}

}  // namespace ftmpi::mpi
