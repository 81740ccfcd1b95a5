#!/usr/bin/env python3
"""The Fortran bindings, generated from mpi.h's declarations.

Every call mpi.h declares gets a C wrapper with gfortran's calling
convention (`mpi_send_`: every argument by reference, CHARACTER lengths
appended, `ierror` last) that converts handles, LOGICALs, strings, statuses,
1-based indices and the Fortran sentinels, then calls the C call's PMPI_
name. mpif.h and the `mpi` module (explicit interfaces) bind to these
wrappers; MPIX_ calls and constants go to mpif-ext.h and `mpi_ext`, as in
Open MPI. What a prototype does not say lives in fortran_kinds.py.

usage:
  fortran.py --handles OUT mpi.h     the predefined handles' Fortran numbers (C++ include)
  fortran.py --wrappers OUT mpi.h    the C wrappers (C++)
  fortran.py --ldscript OUT mpi.h    the other linker names of every wrapper
  fortran.py --mpifh OUT mpi.h       mpif.h       (--mpifh-ext: mpif-ext.h)
  fortran.py --module OUT mpi.h      mpi.F90, the `mpi` module (--module-ext: `mpi_ext`)
  fortran.py --f08-types OUT mpi.h   mpi_f08_types.F90: mpi_f08's types, constants and operators
  fortran.py --f08-module OUT mpi.h  mpi_f08.F90 (--f08-module-ext: mpi_f08_ext.F90)
  fortran.py --f08-wrappers OUT mpi.h  the Fortran wrappers of calls with choice buffers
  fortran.py --f08-shims OUT mpi.h   their C shims (C++)
  fortran.py --f08-ldscript OUT mpi.h  --ldscript's names and mpi_f08's specific names
  fortran.py --names mpi.h           the calls with a Fortran binding, one per line
  fortran.py --f08-names mpi.h       their mpi_f08 specific procedures' linker names
  fortran.py --unbound mpi.h         the calls without one, and why
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fortran_kinds as K  # noqa: E402
import fortran_text  # noqa: E402
import pmpi  # noqa: E402


class Param:
    """One C parameter and how its Fortran binding carries it."""

    def __init__(self, call, text):
        text = text.strip()
        self.call = call
        self.name = pmpi.arg_names(text)[0]
        self.array = "[" in text
        self.dims = text[text.index("["):] if self.array else ""
        base = text[:text.index("[")] if self.array else text
        base = base[:base.rstrip().rfind(self.name)].strip()
        self.const = base.startswith("const ")
        base = base.replace("const ", "").strip()
        self.ptr = base.count("*")
        self.type = base.replace("*", "").strip()
        self.kind = self.classify()

    def classify(self):
        t, n, call = self.type, self.name, self.call
        if t == "int":
            if self.array:
                if (call, n) in K.LOGICAL_ARRAY_OUT:
                    return "logical_array_out"
                if n.endswith("weights"):
                    return "weights"
                if n == "array_of_indices" and call in K.INDICES_OUT:
                    return "indices_out"
                return "int_array"
            if self.ptr == 1:
                if K.is_logical(call, n):
                    return "logical_out"
                if K.INDEX_OUT.get(call) == n:
                    return "index_out"
                return "int_ptr"
            if self.ptr == 0:
                return "int"
        if t in K.HANDLES:
            if self.array:
                return "handle_array"
            return "handle_ptr" if self.ptr == 1 else "handle" if self.ptr == 0 else None
        if t in ("MPI_Aint", "MPI_Offset", "MPI_Count"):
            return "wide_ptr" if self.ptr or self.array else "wide"
        if t == "void" and self.ptr == 1 and not self.array:
            if n in ("attribute_val", "extra_state"):
                return "attr"  # INTEGER(KIND=MPI_ADDRESS_KIND) (MPI-1's: INTEGER) by value
            if n == "buffer_addr":
                return "detach"  # a choice buffer in Fortran 77, TYPE(C_PTR) in mpi_f08
            return "baseptr" if n in K.BASEPTR else "choice"
        if t == "MPI_Status":
            if self.array:
                return "statuses"
            return "status_in" if self.const else "status_out"
        if t == "char" and self.ptr + self.array == 1:
            return "string_in" if self.const else "string_out"
        return None

    def fortran_decl(self):
        """The Fortran declaration of this argument in an interface body."""
        return fortran_text.declaration(self)


def bound_calls(decls):
    """(return type, name, [Param]) of every call with a Fortran binding."""
    out = []
    for ret, name, params in decls:
        if K.unbound(name):
            continue
        ps = [] if params.strip() == "void" else [Param(name, p) for p in split_params(params)]
        if name not in K.SPECIAL:
            bad = [p.name for p in ps if p.kind is None]
            if bad or ret != "int":
                sys.exit(f"fortran.py: no Fortran mapping for {name}'s {bad or 'return type'}: "
                         "add a rule or a line to fortran_kinds.py")
        out.append((ret, name, ps))
    return out


def split_params(params):
    return [p for p in params.split(",") if p.strip() != "..."]


def main(argv):
    args = pmpi.command_line(argv, __doc__)
    if args is None:
        return 2
    mode, _, text = args
    calls = bound_calls(pmpi.declarations(text))
    if mode == "--names":
        for _, name, _ in calls:
            print(name)
        return 0
    if mode == "--f08-names":
        import fortran_f08  # noqa: E402
        for _, name, ps in calls:
            print(fortran_f08.specific(name, ps).lower() + "_")
        return 0
    if mode == "--unbound":
        for _, name, _ in pmpi.declarations(text):
            if K.unbound(name):
                print(f"{name}: {K.why_unbound(name)}")
        return 0
    import fortran_c  # noqa: E402
    import fortran_f08  # noqa: E402
    outputs = {
        "--handles": lambda: fortran_c.handles(text),
        "--wrappers": lambda: fortran_c.wrappers(calls),
        "--ldscript": lambda: fortran_c.ldscript(calls),
        "--mpifh": lambda: fortran_text.mpifh(text, calls, ext=False),
        "--mpifh-ext": lambda: fortran_text.mpifh(text, calls, ext=True),
        "--module": lambda: fortran_text.module(text, calls, ext=False),
        "--module-ext": lambda: fortran_text.module(text, calls, ext=True),
        "--f08-types": lambda: fortran_f08.types_module(text),
        "--f08-module": lambda: fortran_f08.module(text, calls, ext=False),
        "--f08-module-ext": lambda: fortran_f08.module(text, calls, ext=True),
        "--f08-wrappers": lambda: fortran_f08.wrappers(calls),
        "--f08-shims": lambda: fortran_f08.shims(calls),
        "--f08-ldscript": lambda: fortran_c.ldscript(calls) + fortran_f08.ldscript(calls),
    }
    if mode not in outputs:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[2], "w") as f:
        f.write(outputs[mode]())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
