/*
 * MPI_T events (MPI 4.0 section 15.3.8) as a fault-tolerant program's tool
 * sees them: the last rank is killed (SIGKILL); every survivor gets the
 * failure event for it, then one revoke, one shrink and one agreement
 * event, each with the right values and a timestamp inside the run.
 *
 * Callbacks at every level: the failure callbacks may run on the detector's
 * or the launcher's thread (MPI_T_CB_REQUIRE_THREAD_SAFE), or be kept for
 * the application's thread (MPI_T_CB_REQUIRE_MPI_RESTRICTED); the shrink's
 * and the agreement's registrations have only a callback of level
 * MPI_T_CB_REQUIRE_NONE, delivered at the next MPI_T event call. Also the
 * interface's argument checks, and handle_free's callback.
 */
#include <signal.h>

#include "testlib.h"

#define MAXREC 64

struct rec {
    int type; /* index into ev[] */
    long long v[3];
    MPI_Count ts;
    int level;
};
static struct rec recs[MAXREC];
static volatile int nrec;
static int ev[5]; /* detected, learned, revoked, agree, shrink */
static int bad_read_rc = MPI_SUCCESS;
static int freed;

static void on_event(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety level, void *user) {
    (void)reg;
    int which = (int)(intptr_t)user;
    int i = __atomic_fetch_add(&nrec, 1, __ATOMIC_SEQ_CST);
    if (i >= MAXREC) return;
    struct rec *r = &recs[i];
    r->type = which;
    r->level = (int)level;
    unsigned char buf[32];
    MPI_T_event_copy(inst, buf);
    if (which <= 1) { /* two ints */
        int a, b;
        memcpy(&a, buf, 4);
        memcpy(&b, buf + 4, 4);
        r->v[0] = a;
        r->v[1] = b;
    } else if (which == 2) { /* u64 context, int by_peer */
        uint64_t c;
        int b;
        memcpy(&c, buf, 8);
        memcpy(&b, buf + 8, 4);
        r->v[0] = (long long)c;
        r->v[1] = b;
    } else { /* u64 context, int, u64 duration */
        uint64_t c, d;
        int b;
        memcpy(&c, buf, 8);
        memcpy(&b, buf + 8, 4);
        memcpy(&d, buf + 16, 8);
        r->v[0] = (long long)c;
        r->v[1] = b;
        r->v[2] = (long long)d;
        int again = -1;
        MPI_T_event_read(inst, 1, &again);
        if (again != b) bad_read_rc = -2;
    }
    int src = -1;
    MPI_T_event_get_source(inst, &src);
    MPI_T_event_get_timestamp(inst, &r->ts);
    if (src != 0) r->ts = -1;
    int rc = MPI_T_event_read(inst, 7, buf);
    if (rc != MPI_T_ERR_INVALID_INDEX) bad_read_rc = rc == MPI_SUCCESS ? -1 : rc;
}

static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety level, void *user) {
    (void)reg;
    (void)level;
    if (user == &freed) ++freed;
}

static void check_interface(void) {
    int n = 0, idx = -1, num = 0;
    MPI_OK(MPI_T_event_get_num(&n));
    CHECK(n >= 7, "%d event types", n);
    CHECK(MPI_T_event_get_index("no_such_event", &idx) == MPI_T_ERR_INVALID_NAME, "unknown name");
    CHECK(MPI_T_event_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
              MPI_T_ERR_INVALID_INDEX,
          "index -1");
    MPI_T_event_registration bogus = (MPI_T_event_registration)&n;
    CHECK(MPI_T_event_register_callback(bogus, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_event) ==
              MPI_T_ERR_INVALID_HANDLE,
          "bogus handle");
    MPI_T_event_registration r;
    CHECK(MPI_T_event_handle_alloc(n, NULL, MPI_INFO_NULL, &r) == MPI_T_ERR_INVALID_INDEX, "index n");
    CHECK(MPI_T_source_get_info(1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_T_ERR_INVALID_INDEX,
          "source 1");
    /* The failure event: two ints, the path an enumeration. */
    MPI_OK(MPI_T_event_get_index("ftmpi_failure_detected", &idx));
    MPI_Datatype types[4];
    MPI_Aint disp[4];
    MPI_T_enum en = MPI_T_ENUM_NULL;
    char name[64];
    int name_len = sizeof name, bind = -1;
    num = 4;
    MPI_OK(MPI_T_event_get_info(idx, name, &name_len, NULL, types, disp, &num, &en, NULL, NULL, NULL, &bind));
    CHECK(num == 2 && types[0] == MPI_INT && types[1] == MPI_INT && disp[0] == 0 && disp[1] == 4, "layout");
    CHECK(strcmp(name, "ftmpi_failure_detected") == 0 && bind == MPI_T_BIND_NO_OBJECT, "%s", name);
    int items = 0;
    MPI_OK(MPI_T_enum_get_info(en, &items, NULL, NULL));
    CHECK(items == 5, "%d paths", items);
    MPI_OK(MPI_T_event_get_index("ftmpi_agree_decided", &idx));
    num = 4;
    MPI_OK(MPI_T_event_get_info(idx, NULL, NULL, NULL, types, disp, &num, NULL, NULL, NULL, NULL, NULL));
    CHECK(num == 3 && types[0] == MPI_UINT64_T && disp[1] == 8 && disp[2] == 16, "agree layout");
    /* The events are in ftmpi_ft. */
    int cat = -1;
    MPI_OK(MPI_T_category_get_index("ftmpi_ft", &cat));
    MPI_OK(MPI_T_category_get_num_events(cat, &num));
    CHECK(num == n, "%d events in ftmpi_ft", num);
    MPI_T_source_order order;
    MPI_Count tps = 0;
    MPI_OK(MPI_T_source_get_info(0, NULL, NULL, NULL, NULL, &order, &tps, NULL, NULL));
    CHECK(tps == 1000000000, "ticks per second %lld", (long long)tps);
}

static MPI_T_event_registration reg_for(const char *name, int which, MPI_T_cb_safety level) {
    int idx = -1;
    MPI_T_event_registration r;
    MPI_OK(MPI_T_event_get_index(name, &idx));
    MPI_OK(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &r));
    MPI_OK(MPI_T_event_register_callback(r, level, MPI_INFO_NULL, (void *)(intptr_t)which, on_event));
    ev[which] = 0;
    return r;
}

static int count(int which, struct rec **last) {
    int c = 0;
    for (int i = 0; i < nrec && i < MAXREC; ++i)
        if (recs[i].type == which) {
            ++c;
            *last = &recs[i];
        }
    return c;
}

int main(int argc, char **argv) {
    int rank, size, provided;
    tl_init(&argc, &argv, &rank, &size, 3);
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    check_interface();
    MPI_T_event_registration regs[5] = {
        reg_for("ftmpi_failure_detected", 0, MPI_T_CB_REQUIRE_MPI_RESTRICTED),
        reg_for("ftmpi_failure_learned", 1, MPI_T_CB_REQUIRE_THREAD_SAFE),
        reg_for("ftmpi_comm_revoked", 2, MPI_T_CB_REQUIRE_MPI_RESTRICTED),
        reg_for("ftmpi_agree_decided", 3, MPI_T_CB_REQUIRE_NONE),
        reg_for("ftmpi_shrink_done", 4, MPI_T_CB_REQUIRE_NONE),
    };
    MPI_Count t_start = 0, t_end = 0;
    MPI_OK(MPI_T_source_get_timestamp(0, &t_start));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int victim = size - 1;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == victim) raise(SIGKILL);

    int rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK(tl_class_of(rc) == MPIX_ERR_PROC_FAILED || tl_class_of(rc) == MPIX_ERR_REVOKED, "barrier: %d", rc);
    if (rank == 0) MPI_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
    MPI_Comm s;
    MPI_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s));
    int flag = 1;
    MPI_OK(MPIX_Comm_agree(s, &flag));
    CHECK(flag == 1, "agreed %d", flag);
    /* Revoke notices reach the others in the background: wait for it. */
    int revoked = 0;
    while (!revoked) MPIX_Comm_is_revoked(MPI_COMM_WORLD, &revoked);
    MPI_OK(MPI_T_source_get_timestamp(0, &t_end)); /* delivers the NONE-level events */

    struct rec *r = NULL;
    int detected = count(0, &r), learned = 0, saw_victim = 0;
    for (int i = 0; i < nrec && i < MAXREC; ++i)
        if ((recs[i].type == 0 || recs[i].type == 1) && recs[i].v[0] == victim) ++saw_victim;
    CHECK(saw_victim == 1, "%d failure events for rank %d (%d detected)", saw_victim, victim, detected);
    struct rec *l = NULL;
    learned = count(1, &l);
    if (learned > 0) CHECK(l->level >= MPI_T_CB_REQUIRE_THREAD_SAFE, "learned at level %d", l->level);
    if (detected > 0) CHECK(r->v[1] >= 0 && r->v[1] < 5, "path %lld", r->v[1]);
    CHECK(count(2, &r) == 1 && r->v[1] == (rank == 0 ? 0 : 1), "revoke events: by_peer %lld", r ? r->v[1] : -1);
    CHECK(count(4, &r) == 1 && r->v[1] == size - 1 && r->v[2] > 0 && r->level == MPI_T_CB_REQUIRE_NONE,
          "shrink: size %lld", r->v[1]);
    CHECK(count(3, &r) == 1 && r->v[1] == 1 && r->v[2] > 0, "agree: value %lld", r->v[1]);
    for (int i = 0; i < nrec && i < MAXREC; ++i)
        CHECK(recs[i].ts >= t_start && recs[i].ts <= t_end, "event %d at %lld outside [%lld, %lld]", i,
              (long long)recs[i].ts, (long long)t_start, (long long)t_end);
    CHECK(bad_read_rc == MPI_SUCCESS, "MPI_T_event_read: %d", bad_read_rc);

    for (int i = 0; i < 5; ++i) MPI_OK(MPI_T_event_handle_free(regs[i], &freed, on_free));
    CHECK(freed == 5, "%d free callbacks", freed);
    CHECK(MPI_T_event_handle_free(regs[0], NULL, NULL) == MPI_T_ERR_INVALID_HANDLE, "freed twice");
    MPI_OK(MPI_T_finalize());
    MPI_Comm_free(&s);
    MPI_Finalize();
    if (rank == 0) printf("tevents: %d survivors saw the failure, revoke, shrink and agreement\n", size - 1);
    return 0;
}
