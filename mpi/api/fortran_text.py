"""The Fortran side of the bindings (see fortran.py): mpif.h, mpif-ext.h,
and the `mpi` and `mpi_ext` modules' sources."""
import fortran_kinds as K

WIDE_KIND = {"MPI_Aint": "MPI_ADDRESS_KIND", "MPI_Offset": "MPI_OFFSET_KIND", "MPI_Count": "MPI_COUNT_KIND"}
MPI1_ATTR = {"MPI_Attr_get", "MPI_Attr_put", "MPI_Keyval_create"}
# Calls whose Fortran form is not their C form: (kind, result type, arguments)
FORTRAN_FORM = {
    "MPI_Init": ("subroutine", None, ["ierror"]),
    "MPI_Init_thread": ("subroutine", None, ["required", "provided", "ierror"]),
    "MPI_Info_create_env": ("subroutine", None, ["info", "ierror"]),
    "MPI_Pcontrol": ("subroutine", None, ["level"]),
    "MPI_Wtime": ("function", "DOUBLE PRECISION", []),
    "MPI_Wtick": ("function", "DOUBLE PRECISION", []),
    "MPI_Aint_add": ("function", "INTEGER(KIND=MPI_ADDRESS_KIND)", ["base", "disp"]),
    "MPI_Aint_diff": ("function", "INTEGER(KIND=MPI_ADDRESS_KIND)", ["addr1", "addr2"]),
}


def declaration(p):
    """The declaration lines of one dummy argument in an interface body."""
    n, k = p.name, p.kind
    logical = K.is_logical(p.call, n)
    if k in ("choice", "detach"):
        return [f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {n}", f"TYPE(*), DIMENSION(*) :: {n}"]
    if k in ("int", "int_ptr", "logical_out", "index_out"):
        return [f"{'LOGICAL' if logical else 'INTEGER'} :: {n}"]
    if k in ("int_array", "logical_array_out", "weights", "indices_out"):
        shape = "(3,*)" if p.dims.count("[") == 2 else "(*)"
        return [f"{'LOGICAL' if logical else 'INTEGER'} :: {n}{shape}"]
    if k in ("handle", "handle_ptr"):
        return [f"INTEGER :: {n}"]
    if k == "handle_array":
        return [f"INTEGER :: {n}(*)"]
    if k in ("wide", "wide_ptr"):
        return [f"INTEGER(KIND={WIDE_KIND[p.type]}) :: {n}{'(*)' if p.array else ''}"]
    if k == "baseptr":
        return [f"INTEGER(KIND=MPI_ADDRESS_KIND) :: {n}"]
    if k in ("status_in", "status_out"):
        return [f"INTEGER :: {n}(MPI_STATUS_SIZE)"]
    if k == "statuses":
        return [f"INTEGER :: {n}(MPI_STATUS_SIZE,*)"]
    if k in ("string_in", "string_out"):
        return [f"CHARACTER(LEN=*) :: {n}"]
    if p.type.endswith("_function") or p.type.endswith("_function_c"):
        return [f"EXTERNAL :: {n}"]
    if k == "attr":
        return [f"INTEGER{'' if p.call in MPI1_ATTR else '(KIND=MPI_ADDRESS_KIND)'} :: {n}"]
    if p.type == "char" and n == "array_of_argv":
        return [f"CHARACTER(LEN=*) :: {n}(count,*)"]
    if p.type == "char":
        return [f"CHARACTER(LEN=*) :: {n}(*)"]
    raise SystemExit(f"fortran.py: no Fortran declaration for {p.call}'s {n}")


def wrap(head, args, indent):
    """`head(args)` over free-form continuation lines of at most 100 columns."""
    out, line = [], indent + head + "("
    for i, a in enumerate(args):
        piece = a + (", " if i + 1 < len(args) else ")")
        if len(line) + len(piece) > 98:
            out.append(line.rstrip() + " &")
            line = indent + "    "
        line += piece
    if not args:
        line += ")"
    out.append(line)
    return out


def interface(name, ps):
    kind, result, names = FORTRAN_FORM.get(name, ("subroutine", None, [p.name for p in ps] + ["ierror"]))
    by_name = {p.name: p for p in ps}
    head = f"{result} FUNCTION {name}" if result else f"SUBROUTINE {name}"
    lines = wrap(head, names, "    ")
    lines += ["      IMPORT", "      IMPLICIT NONE"]
    for n in names:
        if n == "ierror":
            lines.append("      INTEGER :: ierror")
        elif n in by_name:
            lines += ["      " + d for d in declaration(by_name[n])]
        elif n in ("required", "provided", "info", "level"):
            lines.append(f"      INTEGER :: {n}")
        else:
            raise SystemExit(f"fortran.py: {name}'s Fortran argument {n} is unknown")
    lines.append(f"    END {kind.upper()} {name}")
    return lines


# MPI_SIZEOF's specifics: (Fortran type, kind, bytes); the C side
# (mpi/fortran/special.cpp) has one function per row, named by sizeof_name.
SIZEOF_TYPES = [("INTEGER", k, k) for k in (1, 2, 4, 8, 16)] + [("REAL", k, k) for k in (4, 8, 16)] + \
    [("COMPLEX", k, 2 * k) for k in (4, 8, 16)] + [("LOGICAL", k, k) for k in (1, 2, 4, 8)] + [("CHARACTER", 1, 1)]


def sizeof_name(ftype, kind):
    return f"MPI_Sizeof_{ftype.lower()}{kind}"


def sizeof_interface(f08):
    """MPI_SIZEOF(X, SIZE, IERROR): the size in bytes of X's type (any rank)."""
    lines = ["  INTERFACE MPI_Sizeof"]
    for ftype, kind, _ in SIZEOF_TYPES:
        name = sizeof_name(ftype, kind)
        decl = "CHARACTER(LEN=*)" if ftype == "CHARACTER" else f"{ftype}(KIND={kind})"
        lines += [f"    SUBROUTINE {name}(x, size, ierror)", f"      {decl}, DIMENSION(..) :: x",
                  "      INTEGER :: size", f"      INTEGER{', OPTIONAL' if f08 else ''} :: ierror",
                  f"    END SUBROUTINE {name}"]
    lines.append("  END INTERFACE MPI_Sizeof")
    return lines


def constant_lines(text, ext, free):
    """(declaration, value) of every constant of mpif.h (ext: mpif-ext.h) or the modules."""
    out = []
    if not ext:
        out += [("INTEGER", "MPI_ADDRESS_KIND", 8), ("INTEGER", "MPI_OFFSET_KIND", 8),
                ("INTEGER", "MPI_COUNT_KIND", 8), ("INTEGER", "MPI_INTEGER_KIND", 4),
                ("INTEGER", "MPI_STATUS_SIZE", K.STATUS_SIZE), ("INTEGER", "MPI_SOURCE", 1),
                ("INTEGER", "MPI_TAG", 2), ("INTEGER", "MPI_ERROR", 3),
                ("LOGICAL", "MPI_SUBARRAYS_SUPPORTED", ".FALSE."),
                ("LOGICAL", "MPI_ASYNC_PROTECTS_NONBLOCKING", ".FALSE.")]
    for name, ftype, value, _ in K.constants(text):
        if name.startswith("MPIX_") == ext:
            out.append((ftype, name, value))
    return out


def sentinel_lines(free):
    out = []
    for name, block, ftype, shape in K.SENTINELS:
        out.append(f"{ftype} {name}{shape}")
        out.append(f"COMMON /ftmpi_fc_{block}/ {name}")
    return out


def externals():
    """mpif.h's functions, and the predefined attribute functions (mpi/fortran/callbacks.cpp)."""
    out = ["DOUBLE PRECISION MPI_WTIME, MPI_WTICK", "EXTERNAL MPI_WTIME, MPI_WTICK",
           "INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF", "EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF"]
    return out + attr_functions()


def attr_functions():
    out = []
    for kind in ("COMM_", "TYPE_", "WIN_", ""):
        out.append(f"EXTERNAL MPI_{kind}NULL_COPY_FN, MPI_{kind}DUP_FN")
        out.append(f"EXTERNAL MPI_{kind}NULL_DELETE_FN")
    out.append("EXTERNAL MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL_C")
    return out


def mpifh(text, calls, ext):
    """mpif.h (or mpif-ext.h): valid in fixed and free form, 72 columns."""
    what = "ULFM's MPIX_ constants (Open MPI's mpif-ext.h)" if ext else "the MPI constants for Fortran 77 programs"
    lines = ["! ftmpi's " + ("mpif-ext.h: " if ext else "mpif.h: ") + what + ".",
             "! Generated by mpi/api/fortran.py from mpi.h; do not edit.", "!"]
    for ftype, name, value in constant_lines(text, ext, free=False):
        lines.append(f"      {ftype} {name}")
        lines.append(f"      PARAMETER ({name}={value})")
    if not ext:
        lines += ["      " + s for s in sentinel_lines(free=False)]
        lines += ["      " + s for s in externals()]
    for line in lines:
        if len(line) > 72:
            raise SystemExit(f"fortran.py: mpif.h line over 72 columns: {line}")
    return "\n".join(lines) + "\n"


def module(text, calls, ext):
    """The `mpi` module (MPI_ calls) or `mpi_ext` (MPIX_ calls, which uses mpi)."""
    name = "mpi_ext" if ext else "mpi"
    lines = ["! ftmpi's `" + name + "` module. Generated by mpi/api/fortran.py from mpi.h; do not edit.",
             f"MODULE {name}"]
    if ext:
        lines.append("  USE mpi")
    lines.append("  IMPLICIT NONE")
    for ftype, cname, value in constant_lines(text, ext, free=True):
        lines.append(f"  {ftype}, PARAMETER :: {cname} = {value}")
    if not ext:
        lines += ["  " + s for s in sentinel_lines(free=True) + attr_functions()]
    lines.append("  INTERFACE")
    for _, cname, ps in calls:
        if cname.startswith("MPIX_") == ext and not K.large(cname):
            lines += interface(cname, ps)
    if not ext:
        lines += ["    SUBROUTINE MPI_F_sync_reg(buf)", "      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf",
                  "      TYPE(*), DIMENSION(*) :: buf", "    END SUBROUTINE MPI_F_sync_reg"]
    lines.append("  END INTERFACE")
    if not ext:
        lines += sizeof_interface(f08=False)
    lines.append(f"END MODULE {name}")
    return "\n".join(lines) + "\n"
