// Derived datatypes: the flattened layout of one element, the constructors'
// common builder, reference counting, and pack/unpack.
//
// Every derived type is flattened when it is constructed (so moving data never
// looks at the types it was built from: freeing those is always safe) into
//   - blocks: (offset, length) byte runs of one element, in typemap order
//     (the order data is packed in), adjacent runs merged;
//   - sig: the type signature as runs of (basic type, count), merged;
//   - the bounds: lb/ub (with resized markers), true_lb/true_ub (data only).
// MPI_Type_commit only marks the type usable for communication.
//
// A derived type also keeps its constructor's arguments (Contents) for
// MPI_Type_get_envelope / MPI_Type_get_contents, with a reference on each
// derived input type: get_contents can hand those out after the user freed
// them, and an input lives as long as a type built from it.
//
// Threading: like the rest of libftmpi's MPI layer, one thread at a time (under
// MPI_THREAD_MULTIPLE, the one holding the library lock: mpi/api/api_lock.hpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

struct Block {
    MPI_Aint off;     // from the buffer address of the element
    std::size_t len;  // > 0
    bool operator==(const Block &) const = default;
};

struct SigRun {
    MPI_Datatype type;  // a predefined type
    std::size_t count;
    bool operator==(const SigRun &) const = default;
};

struct Layout {
    // The data runs of one element: `reps` copies of `blocks`, copy r
    // shifted by r * rep_stride (in typemap order: copy 0's blocks, then copy
    // 1's...). A vector of 2^29 ints is one block repeated, not 2^29 blocks;
    // most layouts have reps 1. Walk them with for_each_block.
    std::vector<Block> blocks;
    std::size_t reps = 1;
    MPI_Aint rep_stride = 0;
    std::vector<SigRun> sig;
    std::size_t size = 0;
    MPI_Aint lb = 0, ub = 0;            // extent = ub - lb
    MPI_Aint true_lb = 0, true_ub = 0;  // of the data bytes only; 0,0 when size == 0
    std::size_t align = 1;
    bool explicit_bounds = false;  // lb/ub set by MPI_Type_create_resized (sticky)
    bool any = false;              // at least one copy of some type was placed (bounds valid)

    MPI_Aint extent() const { return ub - lb; }
    // The single basic type when the signature is homogeneous, else null.
    MPI_Datatype basic() const { return sig.size() == 1 ? sig[0].type : MPI_DATATYPE_NULL; }
    std::size_t basic_count() const { return sig.size() == 1 ? sig[0].count : 0; }
};

// `count` consecutive copies (stride: the type's extent) of `type` at byte
// displacement `disp`: one term of a constructor.
struct Piece {
    MPI_Aint disp;
    std::size_t count;
    MPI_Datatype type;
};

// One constructor call as MPI_Type_get_contents reports it (MPI 3.1 §4.1.13):
// the combiner and the arguments, each array in the standard's order.
struct Contents {
    int combiner = MPI_COMBINER_NAMED;
    std::vector<int> ints;
    std::vector<MPI_Aint> addrs;
    std::vector<MPI_Datatype> types;
    // A large-count constructor's (values beyond INT_MAX): its count-valued
    // arguments, which only MPI_Type_get_envelope_c / _contents_c report.
    std::vector<MPI_Count> large = {};
};

// The address `off` bytes from `buf`, by integer arithmetic: with MPI_BOTTOM
// and absolute addresses, or a scratch buffer's origin shifted by a type's
// (absolute) lb, the sum lies outside any object, where pointer arithmetic
// would be undefined.
inline char *byte_at(const void *buf, MPI_Aint off) {
    return reinterpret_cast<char *>(reinterpret_cast<std::uintptr_t>(buf) + static_cast<std::uintptr_t>(off));
}

// Calls f(offset, length) for each data run of one element of l, in typemap order.
template <typename F>
void for_each_block(const Layout &l, F f) {
    for (std::size_t r = 0; r < l.reps; ++r) {
        const MPI_Aint base = static_cast<MPI_Aint>(r) * l.rep_stride;
        for (const Block &b : l.blocks) f(base + b.off, b.len);
    }
}
// The data runs of one element as one list (adjacent runs merged).
std::vector<Block> flat_blocks(const Layout &l);

// The layout of a predefined or derived type (a predefined pair type's has
// its members' blocks, without the padding).
const Layout &type_layout(MPI_Datatype t);
Layout layout_of(MPI_Datatype t);

// Calls f(offset from the element's buffer, offset in the packed data) for
// the start of every basic element of `count` elements of layout `l`, whose
// signature is made of `basic` alone (homogeneous): where reductions apply
// an op one basic element at a time (a padded pair's members are two blocks).
template <typename F>
void for_each_basic(const Layout &l, std::size_t count, MPI_Datatype basic, F f) {
    std::size_t packed = 0;
    for (std::size_t e = 0; e < count; ++e) {
        const MPI_Aint base = static_cast<MPI_Aint>(e) * l.extent();
        for_each_block(l, [&](MPI_Aint off, std::size_t len) {
            // The first basic element starting in this block, and those after it.
            std::size_t into = (basic->size - packed % basic->size) % basic->size;
            for (; into < len; into += basic->size) f(base + off + static_cast<MPI_Aint>(into), packed + into);
            packed += len;
        });
    }
}

// The layout of the pieces placed in order. struct_padding: round the extent up
// to the strictest alignment (MPI's epsilon for MPI_Type_create_struct) unless
// a piece has explicit bounds.
Layout build_layout(const std::vector<Piece> &pieces, bool struct_padding = false);

// A copy of `l` with bounds lb and lb + extent (MPI_Type_create_resized).
Layout resized_layout(Layout l, MPI_Aint lb, MPI_Aint extent);

// `count` blocks of `blocklength` elements of `old`, block i at i * stride
// bytes (MPI_Type_vector and MPI_Type_create_hvector): one repeated block,
// whatever the count.
Layout strided_layout(std::size_t count, std::size_t blocklength, MPI_Aint stride, MPI_Datatype old);

// A run of `len` consecutive indices from `start` along one array dimension.
struct IndexRun {
    MPI_Aint start;
    MPI_Aint len;
};

// The elements of an n-dimensional array of `old` (dimension d has sizes[d]
// elements) whose index along every dimension d is in runs[d] (runs in
// increasing order), in the array's storage order (MPI_ORDER_C: the last
// dimension varies fastest; MPI_ORDER_FORTRAN: the first). Bounds: the whole
// array (lb 0, extent product(sizes) * old's extent), as subarray and darray
// types have. Arguments already validated.
Layout array_layout(const std::vector<MPI_Aint> &sizes, const std::vector<std::vector<IndexRun>> &runs, int order,
                    MPI_Datatype old);

// A new uncommitted handle that owns `l` and records `c` (taking a reference
// on each derived type in c.types), with one reference (the user's).
MPI_Datatype make_type(Layout l, Contents c);
// A constructor's last step: *newtype = make_type(l, c); MPI_SUCCESS.
inline int finish_type(Layout l, Contents c, MPI_Datatype *newtype) {
    *newtype = make_type(std::move(l), std::move(c));
    return MPI_SUCCESS;
}

// References: requests in progress and types built from a derived type hold
// one on it. The last release destroys it (and releases its Contents' types).
// No-ops on predefined types.
void dt_acquire(MPI_Datatype t);
void dt_release(MPI_Datatype t);

// A further user handle on `t` (MPI_Type_get_contents' returned types): one
// more reference, and one more MPI_Type_free the user owes. No-op on
// predefined types and on MPI_Type_create_f90_* types.
void dt_new_handle(MPI_Datatype t);

// `count` elements of committed type `t`, `at` bytes from the buffer, as one
// element of a committed derived type (blocks of 2^30 elements and the
// rest): how ftmpi's int-counted code paths carry counts and displacements
// beyond INT_MAX. The caller frees it; MPI_DATATYPE_NULL when memory runs out.
MPI_Datatype elements_type(MPI_Count count, MPI_Datatype t, MPI_Aint at = 0);


// Copies `count` elements at `buf` into `out` (count * t->size bytes).
void pack(const void *buf, std::size_t count, MPI_Datatype t, void *out);
// Copies `bytes` packed bytes (at most count * t->size; a partial last element
// is allowed) from `in` into the elements at `buf`.
void unpack(const void *in, std::size_t bytes, void *buf, MPI_Datatype t);

// The external32 representation (MPI_Pack_external): bytes of one packed
// element of t; `count` elements at `buf` packed into `out`; `count` packed
// elements at `in` unpacked into the elements at `buf`.
std::size_t external32_size(MPI_Datatype t);
void pack_external32(const void *buf, std::size_t count, MPI_Datatype t, void *out);
void unpack_external32(const void *in, std::size_t count, void *buf, MPI_Datatype t);

// MPI_Get_count / MPI_Get_elements for a message of `bytes` bytes: the number
// of whole elements / basic elements, or MPI_UNDEFINED.
MPI_Count whole_elements_of(MPI_Datatype t, std::size_t bytes);
MPI_Count elements_of(MPI_Datatype t, std::size_t bytes);

}  // namespace ftmpi::mpi

// The part of a derived type that predefined types don't have.
struct ftmpi_dt_derived_s {
    ftmpi::mpi::Layout layout;
    ftmpi::mpi::Contents contents;
    int refs = 1;     // user handles + requests in progress + types built from it
    int handles = 1;  // user handles not yet freed (MPI_Type_free of another is an error)
    // MPI_Type_create_f90_*: predefined as far as the user is concerned (never
    // freed, returned as is by MPI_Type_get_contents).
    bool permanent = false;
    // elements_type's: `elements` elements of `element`, `elements_at` bytes
    // in (a user reduction function is given those, not this type).
    MPI_Datatype element = nullptr;
    MPI_Count elements = 0;
    MPI_Aint elements_at = 0;
    char name[MPI_MAX_OBJECT_NAME] = {};
};
