// Derived datatypes: the flattened layout of one element, the constructors'
// common builder, reference counting, and pack/unpack.
//
// Every derived type is flattened when it is constructed (so a type never
// needs the types it was built from: freeing those is always safe) into
//   - blocks: (offset, length) byte runs of one element, in typemap order
//     (the order data is packed in), adjacent runs merged;
//   - sig: the type signature as runs of (basic type, count), merged;
//   - the bounds: lb/ub (with resized markers), true_lb/true_ub (data only).
// MPI_Type_commit only marks the type usable for communication.
//
// Threading: like the rest of libftmpi's MPI layer, single-threaded.
#pragma once

#include <mpi.h>

#include <cstddef>
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
    std::vector<Block> blocks;
    std::vector<SigRun> sig;
    std::size_t size = 0;
    MPI_Aint lb = 0, ub = 0;             // extent = ub - lb
    MPI_Aint true_lb = 0, true_ub = 0;   // of the data bytes only; 0,0 when size == 0
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

// The layout of a predefined or derived type.
Layout layout_of(MPI_Datatype t);

// The layout of the pieces placed in order. struct_padding: round the extent up
// to the strictest alignment (MPI's epsilon for MPI_Type_create_struct) unless
// a piece has explicit bounds.
Layout build_layout(const std::vector<Piece> &pieces, bool struct_padding = false);

// A copy of `l` with bounds lb and lb + extent (MPI_Type_create_resized).
Layout resized_layout(Layout l, MPI_Aint lb, MPI_Aint extent);

// MPI_Type_create_subarray. Arguments already validated.
Layout subarray_layout(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                       MPI_Datatype old);

// A new uncommitted handle that owns `l`, with one reference (the user's).
MPI_Datatype make_type(Layout l);

// References: requests in progress hold one on a derived type. The last
// release destroys it. No-ops on predefined types.
void dt_acquire(MPI_Datatype t);
void dt_release(MPI_Datatype t);

// Copies `count` elements at `buf` into `out` (count * t->size bytes).
void pack(const void *buf, std::size_t count, MPI_Datatype t, void *out);
// Copies `bytes` packed bytes (at most count * t->size; a partial last element
// is allowed) from `in` into the elements at `buf`.
void unpack(const void *in, std::size_t bytes, void *buf, MPI_Datatype t);

// MPI_Get_count / MPI_Get_elements for a message of `bytes` bytes: the number
// of whole elements / basic elements, or MPI_UNDEFINED.
MPI_Count whole_elements_of(MPI_Datatype t, std::size_t bytes);
MPI_Count elements_of(MPI_Datatype t, std::size_t bytes);

}  // namespace ftmpi::mpi

// The part of a derived type that predefined types don't have.
struct ftmpi_dt_derived_s {
    ftmpi::mpi::Layout layout;
    int refs = 1;
    char name[MPI_MAX_OBJECT_NAME] = {};
};
