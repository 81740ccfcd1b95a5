"""What a C prototype of mpi.h does not say about its Fortran binding.

mpi/api/fortran.py generates the Fortran bindings (mpif.h, the mpi and
mpi_ext modules, and the C wrappers behind them) from mpi.h's declarations.
This module holds the rules it needs beyond the C types: which int
arguments are LOGICAL, which handle arrays have which length, which outputs
are 1-based indices, which calls are written by hand (mpi/fortran/special.cpp)
or have no Fortran binding, and mpi.h's constants with their Fortran values.
Anything the rules cannot place is an error at build time, so a call added
to mpi.h either gets its Fortran binding or a line here saying why not.
"""
import re

# C handle type -> the name in MPI_<name>_c2f / _f2c
HANDLES = {"MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Group": "Group", "MPI_Request": "Request",
           "MPI_Op": "Op", "MPI_Errhandler": "Errhandler", "MPI_Info": "Info", "MPI_Win": "Win",
           "MPI_File": "File", "MPI_Message": "Message", "MPI_Session": "Session"}

# Arguments that are LOGICAL in Fortran (by parameter name), except in the
# calls listed, where `flag` is an INTEGER combined bitwise (agreement).
LOGICAL = {"flag", "commute", "weighted", "high", "reorder", "periods", "remain_dims"}
INTEGER_FLAG = {"MPIX_Comm_agree", "MPIX_Comm_iagree", "MPI_Comm_agree", "MPI_Comm_iagree",
                "MPI_Comm_agreement", "MPI_Icomm_agreement"}
# LOGICAL output arrays, with their length
LOGICAL_ARRAY_OUT = {("MPI_Cart_get", "periods"): "*maxdims"}

# Outputs that are indices, 1-based in Fortran: scalar, or array of `outcount`
INDEX_OUT = {"MPI_Waitany": "index", "MPI_Testany": "index", "MPI_Request_get_status_any": "index"}
INDICES_OUT = {"MPI_Waitsome", "MPI_Testsome", "MPI_Request_get_status_some"}

# Length of an array of handles or statuses, as a C expression over the
# wrapper's arguments (Fortran pointers); `sendtypes`/`recvtypes` of the
# w-collectives take the communicator's (remote) size or topology degree.
ARRAY_LENGTH = {
    "array_of_types": "*count",
    "array_of_datatypes": "*max_datatypes",
}
W_TYPES = {"sendtypes", "recvtypes"}

# Output strings: the C buffer's length (at least the Fortran string's)
STRING_OUT = {"name": "MPI_MAX_OBJECT_NAME", "win_name": "MPI_MAX_OBJECT_NAME",
              "version": "MPI_MAX_LIBRARY_VERSION_STRING",
              "string": "MPI_MAX_ERROR_STRING", "key": "MPI_MAX_INFO_KEY", "port_name": "MPI_MAX_PORT_NAME",
              "datarep": "MPI_MAX_DATAREP_STRING"}
STRING_OUT_BY_CALL = {("MPI_Get_processor_name", "name"): "MPI_MAX_PROCESSOR_NAME"}

# `void *` arguments that are not choice buffers: a pointer written as an
# INTEGER(KIND=MPI_ADDRESS_KIND) (the C side stores a void * there)
BASEPTR = {"baseptr"}

# Written by hand in mpi/fortran/special.cpp (C has no mechanical mapping)
SPECIAL = {"MPI_Init", "MPI_Init_thread", "MPI_Pcontrol", "MPI_Info_create_env", "MPI_Wtime", "MPI_Wtick",
           "MPI_Aint_add", "MPI_Aint_diff", "MPI_Buffer_detach", "MPI_Comm_detach_buffer",
           "MPI_Session_detach_buffer", "MPI_Comm_get_attr", "MPI_Comm_set_attr", "MPI_Win_get_attr",
           "MPI_Win_set_attr", "MPI_Type_get_attr", "MPI_Type_set_attr", "MPI_Attr_get", "MPI_Attr_put",
           "MPI_Info_get_string", "MPI_Info_get", "MPI_Session_get_nth_pset"}

# Written by hand elsewhere in mpi/fortran/: callbacks written in Fortran
# (callbacks.cpp), argument vectors (spawn.cpp), and handles written at
# completion (completion.cpp).
SPECIAL |= {
    "MPI_Op_create", "MPI_Comm_create_errhandler", "MPI_Win_create_errhandler", "MPI_File_create_errhandler",
    "MPI_Session_create_errhandler", "MPI_Errhandler_create", "MPI_Comm_create_keyval", "MPI_Type_create_keyval",
    "MPI_Win_create_keyval", "MPI_Keyval_create", "MPI_Grequest_start",
    "MPI_Comm_spawn", "MPI_Comm_spawn_multiple",
    "MPI_Comm_idup", "MPI_Comm_idup_with_info", "MPI_Comm_ishrink", "MPIX_Comm_ishrink", "MPI_Icomm_validate",
    "MPI_Iwin_validate", "MPI_Ifile_validate",
}

# The calls that complete requests, with their request argument and count:
# they finish the handles written at completion (support.hpp, Completions).
COMPLETES = {"MPI_Wait": ("request", "1"), "MPI_Test": ("request", "1"),
             "MPI_Waitany": ("array_of_requests", "*count"), "MPI_Testany": ("array_of_requests", "*count"),
             "MPI_Waitall": ("array_of_requests", "*count"), "MPI_Testall": ("array_of_requests", "*count"),
             "MPI_Waitsome": ("array_of_requests", "*incount"), "MPI_Testsome": ("array_of_requests", "*incount"),
             # freed before completion: what was pending is kept, not run
             "MPI_Request_free": ("request", "1, false")}

# Data representations, the large-count user op and detaches (large_datarep.cpp).
SPECIAL |= {"MPI_Register_datarep", "MPI_Register_datarep_c", "MPI_Op_create_c", "MPI_Buffer_detach_c",
            "MPI_Comm_detach_buffer_c", "MPI_Session_detach_buffer_c"}


# No Fortran binding: the handle and status conversions are C-only, MPI_T has
# no Fortran interface, the predefined callbacks are provided as
# Fortran-callable functions apart, and MPI-1's address calls (removed in
# MPI-3) took INTEGER addresses in Fortran.
REMOVED_MPI1 = {"MPI_Address", "MPI_Type_extent", "MPI_Type_lb", "MPI_Type_ub", "MPI_Type_hvector",
                "MPI_Type_hindexed", "MPI_Type_struct"}




def large(name):
    """A large-count form (MPI_Send_c): bound in mpi_f08 only."""
    return name.endswith("_c")


def unbound(name):
    return (name.startswith("MPI_T_") or name.endswith("_FN") or name in REMOVED_MPI1
            or re.search(r"_(c2f|f2c|c2f08|f082c|f2f08|f082f)$", name) is not None)


def why_unbound(name):
    if name.startswith("MPI_T_"):
        return "MPI_T has no Fortran binding"
    if name.endswith("_FN"):
        return "a predefined callback: Fortran has its own (mpi/fortran/callbacks.cpp)"
    if name in REMOVED_MPI1:
        return "removed in MPI-3 (its Fortran form took INTEGER addresses)"
    return "a C-only conversion"


def is_logical(call, pname):
    return pname in LOGICAL and not (pname == "flag" and call in INTEGER_FLAG)


# ---- constants ----

DEFINE = re.compile(r"^#define\s+(MPIX?_[A-Z0-9_]+)\s+(.*?)\s*(?:/\*.*)?$", re.M)
PREDEF = re.compile(r"^\(\((MPI_[A-Za-z]+)\)&(ftmpi_[a-z0-9_]+)\)$")
TYPE_MACRO = re.compile(r"^FTMPI_TYPE\(([a-z0-9_]+)\)$")
NULL_HANDLE = re.compile(r"^\(\((MPI_[A-Za-z]+)\)0\)$")
# Fortran sentinels: COMMON blocks compared by address in the wrappers
SENTINELS = [("MPI_BOTTOM", "bottom", "INTEGER", ""), ("MPI_IN_PLACE", "in_place", "INTEGER", ""),
             ("MPI_STATUS_IGNORE", "status_ignore", "INTEGER", "(MPI_STATUS_SIZE)"),
             ("MPI_STATUSES_IGNORE", "statuses_ignore", "INTEGER", "(MPI_STATUS_SIZE,1)"),
             ("MPI_ERRCODES_IGNORE", "errcodes_ignore", "INTEGER", "(1)"),
             ("MPI_ARGV_NULL", "argv_null", "CHARACTER*1", "(1)"),
             ("MPI_ARGVS_NULL", "argvs_null", "CHARACTER*1", "(1,1)"),
             ("MPI_UNWEIGHTED", "unweighted", "INTEGER", "(1)"),
             ("MPI_WEIGHTS_EMPTY", "weights_empty", "INTEGER", "(1)"),
             ("MPI_BUFFER_AUTOMATIC", "buffer_automatic", "INTEGER", "")]
STATUS_SIZE = 6  # MPI_F_STATUS_SIZE (the generated wrappers assert it)
MAX_STRINGS = {"MPI_MAX_PROCESSOR_NAME", "MPI_MAX_ERROR_STRING", "MPI_MAX_OBJECT_NAME",
               "MPI_MAX_LIBRARY_VERSION_STRING", "MPI_MAX_INFO_KEY", "MPI_MAX_INFO_VAL", "MPI_MAX_PSET_NAME_LEN",
               "MPI_MAX_STRINGTAG_LEN", "MPI_MAX_PORT_NAME", "MPI_MAX_DATAREP_STRING"}


def defines(text):
    """mpi.h's #defines, in order, as (name, value text); the first wins."""
    seen, out = set(), []
    for m in DEFINE.finditer(text):
        if m.group(1) not in seen:
            seen.add(m.group(1))
            out.append((m.group(1), m.group(2).strip()))
    return out


def predefined(text):
    """The predefined handles, {C type: [(object, [names])]} in mpi.h's order;
    a handle's Fortran value is its position + 1 (0 is the null handle)."""
    kinds = {}
    for name, value in defines(text):
        if name.startswith("MPI_T_"):
            continue
        m = PREDEF.match(value)
        t = TYPE_MACRO.match(value)
        if m:
            ctype, obj = m.group(1), m.group(2)
        elif t:
            ctype, obj = "MPI_Datatype", "ftmpi_dt_" + t.group(1)
        else:
            continue
        objs = kinds.setdefault(ctype, [])
        for o, names in objs:
            if o == obj:
                names.append(name)
                break
        else:
            objs.append((obj, [name]))
    return kinds


def int_value(value, known):
    """An integer #define's value (or an alias of one), else None."""
    v = value.strip()
    while v.startswith("(") and v.endswith(")") and v.count("(") == 1:
        v = v[1:-1].strip()
    if re.fullmatch(r"-?\d+", v):
        return int(v)
    return known.get(v)


def constants(text):
    """(name, Fortran type, value, C handle type or None) of every integer
    constant and predefined handle."""
    out, known = [], {}
    handles = {}
    for ctype, objs in predefined(text).items():
        for i, (_, names) in enumerate(objs, 1):
            for n in names:
                handles[n] = (i, ctype)
    for name, value in defines(text):
        if name.startswith("MPI_T_") or name.startswith("MPI_F_"):
            continue
        null = NULL_HANDLE.match(value)
        if name in handles:
            out.append((name, "INTEGER", handles[name][0], handles[name][1]))
        elif null:
            out.append((name, "INTEGER", 0, null.group(1)))
        elif name == "MPI_DISPLACEMENT_CURRENT":
            out.append((name, "INTEGER(KIND=MPI_OFFSET_KIND)", int(re.search(r"-?\d+", value).group(0)), None))
        else:
            v = int_value(value, known)
            if v is None:
                continue
            known[name] = v
            if name in MAX_STRINGS:
                v -= 1  # a Fortran string of this length holds any result (no NUL)
            out.append((name, "INTEGER", v, None))
    return out
