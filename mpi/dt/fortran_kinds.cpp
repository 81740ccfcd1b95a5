// The Fortran numeric kinds (MPI 3.1 §17.2.5): MPI_Type_match_size and
// MPI_Type_create_f90_integer / _real / _complex, from one table.
//
// The kinds are gfortran's: INTEGER(1, 2, 4, 8, 16) with decimal ranges 2,
// 4, 9, 18 and 38 (16 where MPI_INTEGER16 exists); REAL(4) and REAL(8) with
// precision 6 and 15 and range 37 and 307; REAL(16) (where MPI_REAL16
// exists) with precision 33 and range 4931; COMPLEX of the three.
//
// An f90 type is a type of its own (its envelope is MPI_COMBINER_F90_*, with
// the p and r it was asked for), but predefined for the user: it is committed,
// cannot be freed, and the same (p, r) always gives the same handle. Inside,
// it is a derived type (mpi/dt/derived.hpp) whose layout is the matching
// predefined type's, so communication, reductions and packing see that type.
#include <array>
#include <map>

#include "mpi/dt/type_checks.hpp"
#include "mpi/dt/derived.hpp"

using namespace ftmpi::mpi;

namespace {

struct Kind {
    int typeclass;  // MPI_TYPECLASS_*
    int size;       // bytes
    int precision;  // decimal digits (reals and complexes)
    int range;      // decimal exponent range
    MPI_Datatype type;
};

// By increasing size within a class: the first kind that fits is the smallest.
const std::vector<Kind> &kinds() {
    static const std::vector<Kind> k = {
        {MPI_TYPECLASS_INTEGER, 1, 0, 2, MPI_INTEGER1},
        {MPI_TYPECLASS_INTEGER, 2, 0, 4, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, 0, 9, MPI_INTEGER4},
        {MPI_TYPECLASS_INTEGER, 8, 0, 18, MPI_INTEGER8},
#ifdef MPI_INTEGER16
        {MPI_TYPECLASS_INTEGER, 16, 0, 38, MPI_INTEGER16},
#endif
        {MPI_TYPECLASS_REAL, 4, 6, 37, MPI_REAL4},
        {MPI_TYPECLASS_REAL, 8, 15, 307, MPI_REAL8},
#ifdef MPI_REAL16
        {MPI_TYPECLASS_REAL, 16, 33, 4931, MPI_REAL16},
#endif
        {MPI_TYPECLASS_COMPLEX, 8, 6, 37, MPI_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, 16, 15, 307, MPI_DOUBLE_COMPLEX},
#ifdef MPI_COMPLEX32
        {MPI_TYPECLASS_COMPLEX, 32, 33, 4931, MPI_COMPLEX32},
#endif
    };
    return k;
}

const char *class_name(int typeclass) {
    return typeclass == MPI_TYPECLASS_INTEGER ? "INTEGER" : typeclass == MPI_TYPECLASS_REAL ? "REAL" : "COMPLEX";
}

// The f90 type for (combiner, p, r); p is unused (0) for integers.
int f90_type(const char *call, int combiner, int typeclass, int p, int r, MPI_Datatype *newtype) {
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, newtype, "newtype"));
    if (typeclass == MPI_TYPECLASS_INTEGER ? r == MPI_UNDEFINED : p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s are MPI_UNDEFINED (give at least one)",
                     typeclass == MPI_TYPECLASS_INTEGER ? "r is" : "p and r");
    // The types made so far, one per (combiner, p, r); they live as long as
    // the process (the standard makes them predefined).
    static struct Made : std::map<std::array<int, 3>, MPI_Datatype> {
        ~Made() {
            for (auto &kv : *this) dt_release(kv.second);
        }
    } made;
    const std::array<int, 3> key{combiner, p, r};
    if (auto it = made.find(key); it != made.end()) {
        *newtype = it->second;
        return MPI_SUCCESS;
    }
    for (const Kind &k : kinds()) {
        if (k.typeclass != typeclass || (p != MPI_UNDEFINED && p > k.precision) || (r != MPI_UNDEFINED && r > k.range))
            continue;
        Contents c{combiner, {p, r}, {}, {}};
        if (typeclass == MPI_TYPECLASS_INTEGER) c.ints = {r};
        MPI_Datatype t = make_type(layout_of(k.type), std::move(c));
        t->committed = true;
        t->derived->permanent = true;
        made.emplace(key, t);
        *newtype = t;
        return MPI_SUCCESS;
    }
    if (typeclass == MPI_TYPECLASS_INTEGER)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "no INTEGER kind has a decimal range of %d (argument r)", r);
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "no %s kind has precision %d and range %d (arguments p and r)",
                 class_name(typeclass), p, r);
}

}  // namespace

extern "C" {

int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype) {
    const char *call = "MPI_Type_match_size";
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, datatype, "datatype"));
    if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL && typeclass != MPI_TYPECLASS_COMPLEX)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call,
                     "invalid typeclass %d (MPI_TYPECLASS_REAL, _INTEGER or _COMPLEX)", typeclass);
    for (const Kind &k : kinds()) {
        if (k.typeclass == typeclass && k.size == size) {
            *datatype = k.type;
            return MPI_SUCCESS;
        }
    }
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "no %s type has %d bytes (argument size)", class_name(typeclass),
                 size);
}

int MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype) {
    return f90_type("MPI_Type_create_f90_integer", MPI_COMBINER_F90_INTEGER, MPI_TYPECLASS_INTEGER, 0, r, newtype);
}

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype) {
    return f90_type("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, MPI_TYPECLASS_REAL, p, r, newtype);
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype) {
    return f90_type("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, MPI_TYPECLASS_COMPLEX, p, r, newtype);
}

}  // extern "C"
