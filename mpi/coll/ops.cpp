// The predefined reduction ops, MPI_Op_create/free, MPI_Reduce_local,
// MPI_Op_commutative, and the elementwise kernels behind every reduction.
#include "mpi/coll/ops.hpp"

#include <algorithm>
#include <atomic>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "mpi/checks.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/dt/predefined.hpp"
#include "mpi/fortran_hooks.hpp"
#include "runtime/config.hpp"

extern "C" {
#define FTMPI_DEFINE_OP(name, id) \
    ftmpi_predefined_op_s ftmpi_op_##name{{{ftmpi::mpi::Magic::op, id, nullptr, true, true}}};
FTMPI_DEFINE_OP(max, 1)
FTMPI_DEFINE_OP(min, 2)
FTMPI_DEFINE_OP(sum, 3)
FTMPI_DEFINE_OP(prod, 4)
FTMPI_DEFINE_OP(land, 5)
FTMPI_DEFINE_OP(band, 6)
FTMPI_DEFINE_OP(lor, 7)
FTMPI_DEFINE_OP(bor, 8)
FTMPI_DEFINE_OP(lxor, 9)
FTMPI_DEFINE_OP(bxor, 10)
FTMPI_DEFINE_OP(minloc, 11)
FTMPI_DEFINE_OP(maxloc, 12)
FTMPI_DEFINE_OP(replace, 13)
FTMPI_DEFINE_OP(no_op, 14)
#undef FTMPI_DEFINE_OP
}

namespace ftmpi::mpi {
namespace {

using Cat = TypeClass;

// Calls f(T*) with the C type of predefined `t` and returns its class
// (TypeClass::none for a type no table row names).
template <typename F>
Cat visit(MPI_Datatype t, F &&f) {
#define FTMPI_CASE(symbol, ctype, label, category) \
    if (t == FTMPI_TYPE(symbol)) {                 \
        f(static_cast<ctype *>(nullptr));          \
        return Cat::category;                      \
    }
    FTMPI_PREDEFINED_TYPES(FTMPI_CASE)
#undef FTMPI_CASE
    return Cat::none;
}

Cat category(MPI_Datatype t) {
    return visit(t, [](auto *) {});
}

bool defined_on(int id, Cat c) {
    switch (id) {
    case op_max:
    case op_min: return c == Cat::c_integer || c == Cat::f_integer || c == Cat::floating;
    case op_sum:
    case op_prod: return c == Cat::c_integer || c == Cat::f_integer || c == Cat::floating || c == Cat::complex;
    case op_land:
    case op_lor:
    case op_lxor: return c == Cat::c_integer || c == Cat::logical;
    case op_band:
    case op_bor:
    case op_bxor: return c == Cat::c_integer || c == Cat::f_integer || c == Cat::byte;
    case op_minloc:
    case op_maxloc: return c == Cat::pair;
    case op_replace:
    case op_no_op: return true;
    default: return false;
    }
}

// The elementwise loops are the whole cost of a large reduction: vectorized
// (-O3's cost model; the buffers never overlap, as MPI requires), and
// compiled once more for each vector unit that x86-64 CPUs may add (kernel()).
template <typename T>
[[gnu::always_inline]] inline void kernel_body(int id, const T *__restrict__ in, T *__restrict__ io, int n) {
    if constexpr (is_scalar_number_v<T>) {
        switch (id) {
        case op_max:
            for (int k = 0; k < n; ++k) io[k] = in[k] > io[k] ? in[k] : io[k];
            return;
        case op_min:
            for (int k = 0; k < n; ++k) io[k] = in[k] < io[k] ? in[k] : io[k];
            return;
        case op_land:
            for (int k = 0; k < n; ++k) io[k] = static_cast<T>(in[k] && io[k]);
            return;
        case op_lor:
            for (int k = 0; k < n; ++k) io[k] = static_cast<T>(in[k] || io[k]);
            return;
        case op_lxor:
            for (int k = 0; k < n; ++k) io[k] = static_cast<T>(!in[k] != !io[k]);
            return;
        default: break;
        }
        if constexpr (is_integer_v<T> && !std::is_same_v<T, bool>) {
            switch (id) {
            case op_band:
                for (int k = 0; k < n; ++k) io[k] = static_cast<T>(in[k] & io[k]);
                return;
            case op_bor:
                for (int k = 0; k < n; ++k) io[k] = static_cast<T>(in[k] | io[k]);
                return;
            case op_bxor:
                for (int k = 0; k < n; ++k) io[k] = static_cast<T>(in[k] ^ io[k]);
                return;
            default: break;
            }
        }
    }
    if constexpr (requires(T a, T b) {
                      a + b;
                      a *b;
                  }) {
        if constexpr (!std::is_same_v<T, bool>) {
            switch (id) {
            case op_sum:
                for (int k = 0; k < n; ++k) io[k] = static_cast<T>(in[k] + io[k]);
                return;
            case op_prod:
                for (int k = 0; k < n; ++k) io[k] = static_cast<T>(in[k] * io[k]);
                return;
            default: break;
            }
        }
    }
    if constexpr (requires(T a) {
                      a.v;
                      a.i;
                  }) {
        // Ties keep the smaller index (MPI 4.1 §6.9.4). Member by member: the
        // padding of a pair is no part of the data and stays as it is.
        if (id == op_minloc) {
            for (int k = 0; k < n; ++k) {
                if (in[k].v < io[k].v) io[k].v = in[k].v, io[k].i = in[k].i;
                else if (in[k].v == io[k].v && in[k].i < io[k].i) io[k].i = in[k].i;
            }
            return;
        }
        if (id == op_maxloc) {
            for (int k = 0; k < n; ++k) {
                if (in[k].v > io[k].v) io[k].v = in[k].v, io[k].i = in[k].i;
                else if (in[k].v == io[k].v && in[k].i < io[k].i) io[k].i = in[k].i;
            }
            return;
        }
    }
    if (id == op_replace) {
        for (int k = 0; k < n; ++k) io[k] = in[k];
    }
    // op_no_op: leaves inout alone.
}

// out = a op b in one pass, for the ops a combining receive meets most
// (Sched::take_eager): false for the others.
template <typename T>
[[gnu::always_inline]] inline bool fused_body(int id, const T *__restrict__ a, const T *__restrict__ b,
                                              T *__restrict__ out, int n) {
    if constexpr (is_scalar_number_v<T> && !std::is_same_v<T, bool>) {
        switch (id) {
        case op_sum:
            for (int k = 0; k < n; ++k) out[k] = static_cast<T>(a[k] + b[k]);
            return true;
        case op_prod:
            for (int k = 0; k < n; ++k) out[k] = static_cast<T>(a[k] * b[k]);
            return true;
        case op_max:
            for (int k = 0; k < n; ++k) out[k] = a[k] > b[k] ? a[k] : b[k];
            return true;
        case op_min:
            for (int k = 0; k < n; ++k) out[k] = a[k] < b[k] ? a[k] : b[k];
            return true;
        default: break;
        }
    }
    return false;
}

template <typename T>
[[gnu::optimize("O3")]] void kernel_base(int id, const T *__restrict__ in, T *__restrict__ io, int n) {
    kernel_body(id, in, io, n);
}
template <typename T>
[[gnu::optimize("O3")]] bool fused_base(int id, const T *a, const T *b, T *out, int n) {
    return fused_body(id, a, b, out, n);
}

#if defined(__x86_64__) && defined(__GNUC__)
// The baseline (x86-64) has 16-byte vectors; Open MPI's op framework picks
// AVX2 or AVX-512 loops at run time, as this does: a 16 KiB MPI_Accumulate
// of chars (osu_acc_latency) is the loop and little else.
template <typename T>
[[gnu::optimize("O3"), gnu::target("avx2")]] void kernel_avx2(int id, const T *__restrict__ in, T *__restrict__ io,
                                                              int n) {
    kernel_body(id, in, io, n);
}
template <typename T>
[[gnu::optimize("O3"), gnu::target("avx512f,avx512bw,avx512vl")]] void kernel_avx512(int id, const T *__restrict__ in,
                                                                                     T *__restrict__ io, int n) {
    kernel_body(id, in, io, n);
}
template <typename T>
[[gnu::optimize("O3"), gnu::target("avx2")]] bool fused_avx2(int id, const T *a, const T *b, T *out, int n) {
    return fused_body(id, a, b, out, n);
}
template <typename T>
[[gnu::optimize("O3"), gnu::target("avx512f,avx512bw,avx512vl")]] bool fused_avx512(int id, const T *a, const T *b,
                                                                                    T *out, int n) {
    return fused_body(id, a, b, out, n);
}

OpIsa best_isa() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        return OpIsa::avx512;
    return __builtin_cpu_supports("avx2") ? OpIsa::avx2 : OpIsa::base;
}
#else
OpIsa best_isa() { return OpIsa::base; }
#endif

// -1 until the first reduction decides (after MPI_Init read the knobs).
std::atomic<int> g_isa{-1};

template <typename T>
void kernel(int id, const T *in, T *io, int n) {
#if defined(__x86_64__) && defined(__GNUC__)
    switch (op_isa()) {
    case OpIsa::avx512: kernel_avx512(id, in, io, n); return;
    case OpIsa::avx2: kernel_avx2(id, in, io, n); return;
    case OpIsa::base: break;
    }
#endif
    kernel_base(id, in, io, n);
}

template <typename T>
bool fused(int id, const T *a, const T *b, T *out, int n) {
#if defined(__x86_64__) && defined(__GNUC__)
    switch (op_isa()) {
    case OpIsa::avx512: return fused_avx512(id, a, b, out, n);
    case OpIsa::avx2: return fused_avx2(id, a, b, out, n);
    case OpIsa::base: break;
    }
#endif
    return fused_base(id, a, b, out, n);
}

}  // namespace

// The one predefined type a derived type is made of (its signature is
// homogeneous), or null.
MPI_Datatype homogeneous_basic(MPI_Datatype type) {
    if (type->predefined) return type;
    if (type->derived == nullptr) return MPI_DATATYPE_NULL;
    return type->derived->layout.basic();
}

OpIsa op_use_isa(OpIsa isa) {
    const OpIsa use = std::min(isa, best_isa());
    g_isa.store(static_cast<int>(use), std::memory_order_relaxed);
    return use;
}

OpIsa op_isa() {
    const int known = g_isa.load(std::memory_order_relaxed);
    if (known >= 0) return static_cast<OpIsa>(known);
    const std::string &want = runtime::config().OP_ISA;
    return op_use_isa(want == "base" ? OpIsa::base : want == "avx2" ? OpIsa::avx2 : OpIsa::avx512);
}

int op_supports(MPI_Op op, MPI_Datatype type) {
    if (!op->predefined) return MPI_SUCCESS;  // a user function takes any type
    MPI_Datatype basic = homogeneous_basic(type);
    if (basic == MPI_DATATYPE_NULL) return MPI_ERR_UNSUPPORTED_OPERATION;
    return defined_on(op->id, category(basic)) ? MPI_SUCCESS : MPI_ERR_OP;
}

void op_apply(const ftmpi_op_s &op, const void *in, void *inout, int count, MPI_Datatype type) {
    if (count <= 0) return;
    if (!op.predefined) {
        MPI_Datatype t = type;
        MPI_Count len = count;
        char *a = byte_at(in, 0), *b = byte_at(inout, 0);
        const ftmpi_dt_derived_s *d = type->derived;
        if (d != nullptr && d->element != nullptr && count == 1) {  // a large count: the user's own type
            t = d->element;
            len = d->elements;
            a = byte_at(a, d->elements_at);
            b = byte_at(b, d->elements_at);
        }
        MPI_Fint ft = op.fortran ? MPI_Type_c2f(t) : 0;
        if (op.fn_c != nullptr) {
            if (op.fortran)
                reinterpret_cast<void (*)(void *, void *, MPI_Count *, MPI_Fint *)>(op.fn_c)(a, b, &len, &ft);
            else op.fn_c(a, b, &len, &t);
            return;
        }
        for (MPI_Count done = 0; done < len;) {  // MPI_User_function's count is an int
            const int chunk = static_cast<int>(std::min<MPI_Count>(len - done, 0x7fffffff));
            const MPI_Aint off = static_cast<MPI_Aint>(done) * t->extent;
            int n = chunk;
            if (op.fortran)
                reinterpret_cast<void (*)(void *, void *, MPI_Fint *, MPI_Fint *)>(op.fn)(byte_at(a, off),
                                                                                          byte_at(b, off), &n, &ft);
            else op.fn(byte_at(a, off), byte_at(b, off), &n, &t);
            done += chunk;
        }
        return;
    }
    if (type->predefined) {
        visit(type, [&](auto *tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            kernel<T>(op.id, static_cast<const T *>(in), static_cast<T *>(inout), count);
        });
        return;
    }
    // A homogeneous derived type (op_supports checked): each data block of
    // each element is a run of its basic type, unless that is a pair type
    // with padding (its members are two blocks): then one at a time.
    const Layout &l = type->derived->layout;
    MPI_Datatype basic = l.basic();
    visit(basic, [&](auto *tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if (!basic->contiguous) {
            for_each_basic(l, static_cast<std::size_t>(count), basic, [&](MPI_Aint off, std::size_t) {
                kernel<T>(op.id, reinterpret_cast<const T *>(byte_at(in, off)),
                          reinterpret_cast<T *>(byte_at(inout, off)), 1);
            });
            return;
        }
        for (int e = 0; e < count; ++e) {
            for_each_block(l, [&](MPI_Aint block_off, std::size_t len) {
                const MPI_Aint off = static_cast<MPI_Aint>(e) * l.extent() + block_off;
                // A block of a large-count type may hold more than INT_MAX elements.
                constexpr std::size_t k_run = std::size_t{1} << 30;
                const std::size_t n = len / basic->size;
                for (std::size_t done = 0; done < n; done += k_run)
                    kernel<T>(op.id, reinterpret_cast<const T *>(byte_at(in, off)) + done,
                              reinterpret_cast<T *>(byte_at(inout, off)) + done,
                              static_cast<int>(std::min(k_run, n - done)));
            });
        }
    });
}

void op_combine(const ftmpi_op_s &op, const void *in, const void *src, void *out, int count, MPI_Datatype type) {
    if (count <= 0) return;
    if (op.predefined && type->predefined) {
        bool done = false;
        visit(type, [&](auto *tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            done =
                fused<T>(op.id, static_cast<const T *>(in), static_cast<const T *>(src), static_cast<T *>(out), count);
        });
        if (done) return;
    }
    std::memcpy(out, src, static_cast<std::size_t>(count) * type->size);
    op_apply(op, in, out, count, type);
}

int check_op(const char *call, MPI_Comm comm, MPI_Op op) {
    if (op != MPI_OP_NULL && op->magic == Magic::op) return MPI_SUCCESS;
    return raise(comm, MPI_ERR_OP, call, "invalid op (argument op is %s)",
                 op == MPI_OP_NULL ? "MPI_OP_NULL" : "not an op");
}

int check_op_type(const char *call, MPI_Comm comm, MPI_Op op, MPI_Datatype type) {
    FTMPI_TRY(check_op(call, comm, op));
    const int e = op_supports(op, type);
    if (e == MPI_ERR_OP) return raise(comm, e, call, "the predefined op is not defined on datatype %s", type->name);
    if (e != MPI_SUCCESS)
        return raise(comm, e, call,
                     "predefined ops on derived datatype %s (not made of one basic type) are not supported",
                     type->name ? type->name : "(unnamed)");
    return MPI_SUCCESS;
}

int set_op_fortran(MPI_Op op) {
    FTMPI_TRY(check_op("MPI_Op_create", MPI_COMM_NULL, op));
    op->fortran = !op->predefined;
    return MPI_SUCCESS;
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op) {
    FTMPI_TRY(check_init("MPI_Op_create"));
    FTMPI_CHECK(check_nonnull("MPI_Op_create", MPI_COMM_NULL, reinterpret_cast<const void *>(user_fn), "user_fn"));
    FTMPI_CHECK(check_nonnull("MPI_Op_create", MPI_COMM_NULL, op, "op"));
    *op = new ftmpi_op_s{Magic::op, op_user, user_fn, commute != 0, false, nullptr};
    return MPI_SUCCESS;
}

// Pending nonblocking reductions keep their own copy of the op, so freeing it
// early is safe.
int MPI_Op_free(MPI_Op *op) {
    FTMPI_TRY(check_init("MPI_Op_free"));
    FTMPI_CHECK(check_nonnull("MPI_Op_free", MPI_COMM_NULL, op, "op"));
    FTMPI_CHECK(check_op("MPI_Op_free", MPI_COMM_NULL, *op));
    if ((*op)->predefined) return raise(MPI_COMM_NULL, MPI_ERR_OP, "MPI_Op_free", "argument op is a predefined op");
    (*op)->magic = Magic::dead;
    delete *op;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int MPI_Op_commutative(MPI_Op op, int *commute) {
    FTMPI_CHECK(check_op("MPI_Op_commutative", MPI_COMM_NULL, op));
    FTMPI_CHECK(check_nonnull("MPI_Op_commutative", MPI_COMM_NULL, commute, "commute"));
    *commute = op->commute ? 1 : 0;
    return MPI_SUCCESS;
}

int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
    const char *call = "MPI_Reduce_local";
    FTMPI_CHECK(check_count(call, MPI_COMM_NULL, count));
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, datatype));
    FTMPI_CHECK(check_op_type(call, MPI_COMM_NULL, op, datatype));
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
        return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, call, "MPI_IN_PLACE is not allowed (argument %s)",
                     inbuf == MPI_IN_PLACE ? "inbuf" : "inoutbuf");
    FTMPI_CHECK(check_typed_buffer(call, MPI_COMM_NULL, inbuf, count, datatype, "inbuf"));
    FTMPI_CHECK(check_typed_buffer(call, MPI_COMM_NULL, inoutbuf, count, datatype, "inoutbuf"));
    op_apply(*op, inbuf, inoutbuf, count, datatype);
    return MPI_SUCCESS;
}

}  // extern "C"
