// Groups: ordered sets of processes (job ranks). Local operations only.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "mpi/checks.hpp"
#include "mpi/comm/group.hpp"

namespace ftmpi::mpi {

MPI_Group new_group(std::vector<int> procs) {
    auto g = new ftmpi_group_s;
    g->procs = std::move(procs);
    return g;
}

MPI_Group group_or_empty(std::vector<int> procs) {
    return procs.empty() ? MPI_GROUP_EMPTY : new_group(std::move(procs));
}

namespace {

bool valid_group(MPI_Group g) { return g != MPI_GROUP_NULL && g->magic == Magic::group; }

int check_group(const char *call, MPI_Group g, const char *arg = "group") {
    if (valid_group(g)) return MPI_SUCCESS;
    return raise(MPI_COMM_NULL, MPI_ERR_GROUP, call, "invalid group (argument %s is %s)", arg,
                 g == MPI_GROUP_NULL ? "MPI_GROUP_NULL" : "not a group");
}

// Checks that ranks[0..n) are distinct valid ranks of g.
int check_rank_list(const char *call, MPI_Group g, int n, const int ranks[]) {
    if (n < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative n %d", n);
    if (n > 0) FTMPI_TRY(check_nonnull(call, MPI_COMM_NULL, ranks, "ranks"));
    std::vector<bool> seen(g->procs.size(), false);
    for (int i = 0; i < n; ++i) {
        const int r = ranks[i];
        if (r < 0 || r >= static_cast<int>(g->procs.size()))
            return raise(MPI_COMM_NULL, MPI_ERR_RANK, call, "ranks[%d] = %d is not a rank of the group (size %zu)", i,
                         r, g->procs.size());
        if (seen[static_cast<std::size_t>(r)])
            return raise(MPI_COMM_NULL, MPI_ERR_RANK, call, "ranks[%d] = %d appears twice", i, r);
        seen[static_cast<std::size_t>(r)] = true;
    }
    return MPI_SUCCESS;
}

// Expands (first, last, stride) triplets into ranks, checking them.
int expand_ranges(const char *call, MPI_Group g, int n, int ranges[][3], std::vector<int> &out) {
    if (n < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative n %d", n);
    if (n > 0) FTMPI_TRY(check_nonnull(call, MPI_COMM_NULL, ranges, "ranges"));
    const int size = static_cast<int>(g->procs.size());
    for (int i = 0; i < n; ++i) {
        const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "ranges[%d] has stride 0", i);
        if (first < 0 || first >= size || last < 0 || last >= size)
            return raise(MPI_COMM_NULL, MPI_ERR_RANK, call, "ranges[%d] = (%d, %d, %d) leaves the group (size %d)", i,
                         first, last, stride, size);
        if ((stride > 0 && first > last) || (stride < 0 && first < last)) continue;
        for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) out.push_back(r);
    }
    return check_rank_list(call, g, static_cast<int>(out.size()), out.data());
}

int output(const char *call, MPI_Group *newgroup, std::vector<int> procs) {
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, newgroup, "newgroup"));
    *newgroup = group_or_empty(std::move(procs));
    return MPI_SUCCESS;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group) {
    FTMPI_TRY(check_init("MPI_Comm_group"));
    FTMPI_CHECK(check_comm("MPI_Comm_group", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_group", comm, group, "group"));
    *group = new_group(comm->inter ? comm->local_procs : comm->procs);
    return MPI_SUCCESS;
}

int MPI_Group_size(MPI_Group group, int *size) {
    FTMPI_CHECK(check_group("MPI_Group_size", group));
    FTMPI_CHECK(check_nonnull("MPI_Group_size", MPI_COMM_NULL, size, "size"));
    *size = static_cast<int>(group->procs.size());
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank) {
    FTMPI_CHECK(check_group("MPI_Group_rank", group));
    FTMPI_CHECK(check_nonnull("MPI_Group_rank", MPI_COMM_NULL, rank, "rank"));
    const int me = g.pm ? g.pm->job().id() : 0;
    auto it = std::find(group->procs.begin(), group->procs.end(), me);
    *rank = it == group->procs.end() ? MPI_UNDEFINED : static_cast<int>(it - group->procs.begin());
    return MPI_SUCCESS;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    FTMPI_CHECK(check_group("MPI_Group_incl", group));
    FTMPI_TRY(check_rank_list("MPI_Group_incl", group, n, ranks));
    std::vector<int> procs;
    for (int i = 0; i < n; ++i) procs.push_back(group->procs[static_cast<std::size_t>(ranks[i])]);
    return output("MPI_Group_incl", newgroup, std::move(procs));
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    FTMPI_CHECK(check_group("MPI_Group_excl", group));
    FTMPI_TRY(check_rank_list("MPI_Group_excl", group, n, ranks));
    std::vector<bool> drop(group->procs.size(), false);
    for (int i = 0; i < n; ++i) drop[static_cast<std::size_t>(ranks[i])] = true;
    std::vector<int> procs;
    for (std::size_t r = 0; r < group->procs.size(); ++r)
        if (!drop[r]) procs.push_back(group->procs[r]);
    return output("MPI_Group_excl", newgroup, std::move(procs));
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) {
    FTMPI_CHECK(check_group("MPI_Group_range_incl", group));
    std::vector<int> ranks;
    FTMPI_TRY(expand_ranges("MPI_Group_range_incl", group, n, ranges, ranks));
    return MPI_Group_incl(group, static_cast<int>(ranks.size()), ranks.data(), newgroup);
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) {
    FTMPI_CHECK(check_group("MPI_Group_range_excl", group));
    std::vector<int> ranks;
    FTMPI_TRY(expand_ranges("MPI_Group_range_excl", group, n, ranges, ranks));
    return MPI_Group_excl(group, static_cast<int>(ranks.size()), ranks.data(), newgroup);
}

// Union: group1's processes in order, then those of group2 not in group1.
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    FTMPI_CHECK(check_group("MPI_Group_union", group1, "group1"));
    FTMPI_CHECK(check_group("MPI_Group_union", group2, "group2"));
    std::vector<int> procs = group1->procs;
    std::unordered_set<int> in1(group1->procs.begin(), group1->procs.end());
    for (int p : group2->procs)
        if (!in1.count(p)) procs.push_back(p);
    return output("MPI_Group_union", newgroup, std::move(procs));
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    FTMPI_CHECK(check_group("MPI_Group_intersection", group1, "group1"));
    FTMPI_CHECK(check_group("MPI_Group_intersection", group2, "group2"));
    std::unordered_set<int> in2(group2->procs.begin(), group2->procs.end());
    std::vector<int> procs;
    for (int p : group1->procs)
        if (in2.count(p)) procs.push_back(p);
    return output("MPI_Group_intersection", newgroup, std::move(procs));
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    FTMPI_CHECK(check_group("MPI_Group_difference", group1, "group1"));
    FTMPI_CHECK(check_group("MPI_Group_difference", group2, "group2"));
    std::unordered_set<int> in2(group2->procs.begin(), group2->procs.end());
    std::vector<int> procs;
    for (int p : group1->procs)
        if (!in2.count(p)) procs.push_back(p);
    return output("MPI_Group_difference", newgroup, std::move(procs));
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
    FTMPI_CHECK(check_group("MPI_Group_translate_ranks", group1, "group1"));
    FTMPI_CHECK(check_group("MPI_Group_translate_ranks", group2, "group2"));
    if (n < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_translate_ranks", "negative n %d", n);
    if (n > 0) {
        FTMPI_CHECK(check_nonnull("MPI_Group_translate_ranks", MPI_COMM_NULL, ranks1, "ranks1"));
        FTMPI_CHECK(check_nonnull("MPI_Group_translate_ranks", MPI_COMM_NULL, ranks2, "ranks2"));
    }
    std::unordered_map<int, int> where;
    for (std::size_t r = 0; r < group2->procs.size(); ++r) where[group2->procs[r]] = static_cast<int>(r);
    for (int i = 0; i < n; ++i) {
        const int r = ranks1[i];
        if (r == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (r < 0 || r >= static_cast<int>(group1->procs.size()))
            return raise(MPI_COMM_NULL, MPI_ERR_RANK, "MPI_Group_translate_ranks",
                         "ranks1[%d] = %d is not a rank of group1 (size %zu)", i, r, group1->procs.size());
        auto it = where.find(group1->procs[static_cast<std::size_t>(r)]);
        ranks2[i] = it == where.end() ? MPI_UNDEFINED : it->second;
    }
    return MPI_SUCCESS;
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result) {
    FTMPI_CHECK(check_group("MPI_Group_compare", group1, "group1"));
    FTMPI_CHECK(check_group("MPI_Group_compare", group2, "group2"));
    FTMPI_CHECK(check_nonnull("MPI_Group_compare", MPI_COMM_NULL, result, "result"));
    if (group1->procs == group2->procs) {
        *result = MPI_IDENT;
    } else {
        std::vector<int> a = group1->procs, b = group2->procs;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        *result = a == b ? MPI_SIMILAR : MPI_UNEQUAL;
    }
    return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group *group) {
    FTMPI_CHECK(check_nonnull("MPI_Group_free", MPI_COMM_NULL, group, "group"));
    FTMPI_CHECK(check_group("MPI_Group_free", *group));
    if (!(*group)->predefined) {
        (*group)->magic = Magic::dead;
        delete *group;
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

}  // extern "C"
