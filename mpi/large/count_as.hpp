// Large counts (MPI 4.0's _c functions): a count of MPI_Count elements
// expressed as an int count of a datatype, so that each _c function runs
// its int twin, one code path, which moves data by byte counts in size_t
// (the transports carry messages over 2 GiB).
//
// A count that fits in an int stays as it is; a larger one becomes one
// element of a derived type made of `count` elements (contiguous blocks of
// 2^30 of them, and the rest). A request keeps its own reference on that
// type, so it goes when both the call and the request are done.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "mpi/dt/derived.hpp"
#include "mpi/errors.hpp"

namespace ftmpi::mpi {

class CountAs {
public:
    CountAs(MPI_Count count, MPI_Datatype type);
    ~CountAs();
    CountAs(const CountAs &) = delete;
    CountAs &operator=(const CountAs &) = delete;

    int count() const { return count_; }
    MPI_Datatype type() const { return type_; }
    // After a call that returned `rc` and made *request: the request holds
    // the built type until it is freed (a collective's schedule uses it in
    // later rounds; a persistent request at every start).
    void keep(const MPI_Request *request, int rc) const;

private:
    int count_;
    MPI_Datatype type_;
    bool owned_ = false;
};

// An MPI_Count (or MPI_Aint) that an int twin takes: itself when it fits,
// else a value the twin rejects as it rejects a negative one (so a count
// that fits nowhere is an error of the right class, never wrapped around).
inline int int_or_invalid(MPI_Count v) { return v >= -0x7fffffffLL - 1 && v <= 0x7fffffff ? static_cast<int>(v) : -1; }

// The v and w collectives' arrays (mpi/api/large.py): how many entries each
// has at this process, -1 when the communicator is not valid (the twin
// reports it) or the process's role makes the array insignificant.
struct Shape {
    int in = -1, out = -1, local = -1;  // receive side, send side, the local group
    bool root_side = false;             // this process is the root (MPI_ROOT's group)
};
Shape shape_of(MPI_Comm comm, bool neighbor, int root);

// `n` entries of `a` as T (null when n < 0 or a is null); ok() is false when
// one does not fit in T.
template <typename T>
class Ints {
public:
    template <typename From>
    Ints(const From *a, int n) : null_(a == nullptr || n < 0) {
        if (null_) return;
        v_.resize(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
            if constexpr (sizeof(T) < sizeof(From))
                if (a[i] < From{INT32_MIN} || a[i] > From{INT32_MAX}) ok_ = false;
            v_[static_cast<std::size_t>(i)] = static_cast<T>(a[i]);
        }
    }
    bool ok() const { return ok_; }
    const T *data() const { return null_ ? nullptr : v_.data(); }

private:
    std::vector<T> v_;
    bool null_;
    bool ok_ = true;
};

}  // namespace ftmpi::mpi
