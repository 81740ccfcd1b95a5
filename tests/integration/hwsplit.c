/*
 * MPI_Comm_split_type by hardware (MPI 4.0: MPI_COMM_TYPE_HW_GUIDED and
 * MPI_COMM_TYPE_HW_UNGUIDED) and MPI_Get_hw_resource_info (MPI 4.1), checked
 * against each process's own report of where it is bound:
 *   - the info lists the CPUs of sched_getaffinity;
 *   - HW_GUIDED "mpi_shared_memory" gives MPI_COMM_TYPE_SHARED's groups;
 *   - HW_GUIDED at each hwloc level gives exactly the processes of this node
 *     bound within the same object (MPI_COMM_NULL when not within one), an
 *     unknown type MPI_COMM_NULL everywhere;
 *   - HW_UNGUIDED gives the largest level that splits the communicator
 *     into strict subsets (its name in the new communicator's info), or
 *     MPI_COMM_NULL where none does.
 *   - MPI_COMM_TYPE_RESOURCE_GUIDED (MPI 4.1) by the process sets of
 *     sessions.
 * Works with any binding (ftmpirun binds ranks to cores by default; with
 * more ranks than cores, consecutive ranks share one).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define LEVELS 7
static const char *level_names[LEVELS] = {"Package", "NUMANode", "L3Cache", "L2Cache", "L1Cache", "Core", "PU"};

/* The CPUs of this process as a list ("0-1,4"). */
static void affinity_list(char *out, size_t cap) {
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity");
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &set)) continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) ++e;
        size_t len = strlen(out);
        if (e == c) snprintf(out + len, cap - len, "%s%d", len ? "," : "", c);
        else snprintf(out + len, cap - len, "%s%d-%d", len ? "," : "", c, e);
        c = e;
    }
}

static int info_int(MPI_Info info, const char *key) {
    char value[64];
    int flag = 0;
    MPI_OK(MPI_Info_get(info, key, (int)sizeof value - 1, value, &flag));
    return flag ? atoi(value) : -1;
}

/* The new communicator's mpi_hw_resource_type, or "" */
static void type_of(MPI_Comm c, char *out, int cap) {
    MPI_Info used;
    int flag = 0;
    MPI_OK(MPI_Comm_get_info(c, &used));
    MPI_OK(MPI_Info_get(used, "mpi_hw_resource_type", cap - 1, out, &flag));
    if (!flag) out[0] = '\0';
    MPI_OK(MPI_Info_free(&used));
}

static MPI_Comm split_guided(const char *type) {
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", type));
    MPI_Comm c;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    MPI_OK(MPI_Info_free(&info));
    return c;
}

/* Members of world with the same node and `want` at `level` (-1: node only). */
static int count_same(const int *all, int n, const int *mine, int level) {
    int count = 0;
    for (int r = 0; r < n; ++r) {
        const int *p = all + r * (LEVELS + 1);
        if (p[0] == mine[0] && (level < 0 || p[level + 1] == mine[level + 1])) ++count;
    }
    return count;
}

/* By process set (MPI 4.1): mpi://WORLD, mpi://SELF, ftmpi://node (this
   node's processes: MPI_COMM_TYPE_SHARED's part), an unknown one. */
static void check_psets(int rank, int size, MPI_Comm shared) {
    const char *psets[4] = {"mpi://WORLD", "mpi://SELF", "ftmpi://node", "mpi://nowhere"};
    const int sizes[4] = {size, 1, -1, 0};
    int cmp = MPI_UNEQUAL, flag = 0;
    MPI_Comm c;
    for (int i = 0; i < 4; ++i) {
        MPI_Info info;
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Info_set(info, "mpi_pset_name", psets[i]));
        MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank, info, &c));
        MPI_OK(MPI_Info_free(&info));
        if (sizes[i] == 0) {
            CHECK(c == MPI_COMM_NULL, "%s: a communicator", psets[i]);
            continue;
        }
        CHECK(c != MPI_COMM_NULL, "%s: MPI_COMM_NULL", psets[i]);
        if (sizes[i] < 0) {
            MPI_OK(MPI_Comm_compare(c, shared, &cmp));
            CHECK(cmp == MPI_CONGRUENT, "%s vs MPI_COMM_TYPE_SHARED: %d", psets[i], cmp);
        } else {
            int n = 0;
            MPI_OK(MPI_Comm_size(c, &n));
            CHECK(n == sizes[i], "%s: %d members, expected %d", psets[i], n, sizes[i]);
        }
        MPI_Info used;
        char name[MPI_MAX_INFO_VAL];
        MPI_OK(MPI_Comm_get_info(c, &used));
        MPI_OK(MPI_Info_get(used, "mpi_pset_name", (int)sizeof name - 1, name, &flag));
        CHECK(flag && strcmp(name, psets[i]) == 0, "%s: the part's info says %s", psets[i], flag ? name : "nothing");
        MPI_OK(MPI_Info_free(&used));
        MPI_OK(MPI_Comm_free(&c));
    }
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 1);

    /* Where this process is, as the info says. */
    MPI_Info hw;
    MPI_OK(MPI_Get_hw_resource_info(&hw));
    char cpus[256], want[256];
    int flag = 0;
    MPI_OK(MPI_Info_get(hw, "ftmpi_hw_cpus", (int)sizeof cpus - 1, cpus, &flag));
    affinity_list(want, sizeof want);
    CHECK(flag && strcmp(cpus, want) == 0, "ftmpi_hw_cpus \"%s\", sched_getaffinity \"%s\"", flag ? cpus : "", want);
    int place[LEVELS + 1];
    MPI_Comm shared;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    MPI_OK(MPI_Allreduce(&rank, &place[0], 1, MPI_INT, MPI_MIN, shared));
    for (int l = 0; l < LEVELS; ++l) {
        char key[64];
        snprintf(key, sizeof key, "ftmpi_hw_%s", level_names[l]);
        place[l + 1] = info_int(hw, key);
    }
    MPI_OK(MPI_Info_free(&hw));
    int *all = malloc(sizeof(int) * (LEVELS + 1) * (size_t)size);
    MPI_OK(MPI_Allgather(place, LEVELS + 1, MPI_INT, all, LEVELS + 1, MPI_INT, MPI_COMM_WORLD));

    /* Guided, the node: as MPI_COMM_TYPE_SHARED. */
    MPI_Comm c = split_guided("mpi_shared_memory");
    int cmp = MPI_UNEQUAL;
    MPI_OK(MPI_Comm_compare(c, shared, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "mpi_shared_memory vs MPI_COMM_TYPE_SHARED: %d", cmp);
    char type[MPI_MAX_INFO_VAL];
    type_of(c, type, (int)sizeof type);
    CHECK(strcmp(type, "mpi_shared_memory") == 0, "the node's part says \"%s\"", type);
    MPI_OK(MPI_Comm_free(&c));

    /* Guided, every hwloc level. */
    for (int l = 0; l < LEVELS; ++l) {
        c = split_guided(level_names[l]);
        if (place[l + 1] < 0) {
            CHECK(c == MPI_COMM_NULL, "%s: a communicator, but not bound within one", level_names[l]);
            continue;
        }
        CHECK(c != MPI_COMM_NULL, "%s: MPI_COMM_NULL, but bound within object %d", level_names[l], place[l + 1]);
        int n = 0;
        MPI_OK(MPI_Comm_size(c, &n));
        CHECK(n == count_same(all, size, place, l), "%s: %d members, %d processes share object %d", level_names[l], n,
              count_same(all, size, place, l), place[l + 1]);
        int lo = 0, hi = 0;
        MPI_OK(MPI_Allreduce(&place[l + 1], &lo, 1, MPI_INT, MPI_MIN, c));
        MPI_OK(MPI_Allreduce(&place[l + 1], &hi, 1, MPI_INT, MPI_MAX, c));
        CHECK(lo == hi, "%s: members in objects %d..%d", level_names[l], lo, hi);
        type_of(c, type, (int)sizeof type);
        CHECK(strcmp(type, level_names[l]) == 0, "%s: the part says \"%s\"", level_names[l], type);
        MPI_OK(MPI_Comm_free(&c));
    }
    c = split_guided("Bogus");
    CHECK(c == MPI_COMM_NULL, "an unknown resource type gave a communicator");

    /* Unguided: the largest level (node first) whose part is a strict subset. */
    int expect = -2; /* -2: none; -1: the node; else the hwloc level */
    for (int l = -1; l < LEVELS && expect == -2; ++l) {
        if (l >= 0 && place[l + 1] < 0) continue;
        int same = 0;
        for (int r = 0; r < size; ++r)
            same += memcmp(all + r * (LEVELS + 1), place, sizeof(int) * (size_t)(l + 2)) == 0;
        if (same < size) expect = l;
    }
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, rank, MPI_INFO_NULL, &c));
    if (expect == -2) {
        CHECK(c == MPI_COMM_NULL, "unguided: a communicator, but no level splits the %d processes", size);
    } else {
        CHECK(c != MPI_COMM_NULL, "unguided: MPI_COMM_NULL, but level %d splits", expect);
        int n = 0;
        MPI_OK(MPI_Comm_size(c, &n));
        CHECK(n < size, "unguided: %d members of %d, not a strict subset", n, size);
        type_of(c, type, (int)sizeof type);
        const char *name = expect < 0 ? "mpi_shared_memory" : level_names[expect];
        CHECK(strcmp(type, name) == 0, "unguided: the part says \"%s\", expected \"%s\"", type, name);
        MPI_OK(MPI_Comm_free(&c));
    }
    check_psets(rank, size, shared);
    if (rank == 0)
        printf("hwsplit: %d processes, unguided level %s\n", size,
               expect == -2 ? "none"
               : expect < 0 ? "node"
                            : level_names[expect]);
    free(all);
    MPI_OK(MPI_Comm_free(&shared));
    MPI_Finalize();
    return 0;
}
