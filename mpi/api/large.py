#!/usr/bin/env python3
"""The large-count (_c) functions that forward to their int twins, from
mpi.h's own declarations (build time).

For every MPI_name_c that mpi.h declares and mpi/large/*.cpp does not define
by hand (HANDWRITTEN), the twin MPI_name's declaration says what changed:
  - an int count that became MPI_Count, with the datatype after it, goes
    through CountAs (mpi/large/count_as.hpp): the twin gets an int count of
    a type;
  - an int array of counts or displacements that became MPI_Count or
    MPI_Aint is converted to ints (Ints), the entries this process's role
    makes significant (Shape): a root's, the send side unless MPI_IN_PLACE;
    one beyond INT_MAX sends the v or w collective to its typed form
    (WIDE: mpi/large/wide.hpp; another family with arrays is a build error);
  - a request the call makes holds the built types (CountAs::keep).
So a _c function added to mpi.h gets its implementation by construction,
and a twin's argument checks and error classes serve both (errors name the
_c function: CallAlias).

usage: large.py OUT mpi.h
"""
import re
import sys

import pmpi

HANDWRITTEN = {  # mpi/large/misc_c.cpp, pack_win_c.cpp
    "MPI_Get_count_c", "MPI_Get_elements_c", "MPI_Type_size_c", "MPI_Type_get_extent_c",
    "MPI_Type_get_true_extent_c",
    # mpi/dt/constructors.cpp, darray.cpp, envelope.cpp: MPI_Count inside
    "MPI_Type_contiguous_c", "MPI_Type_vector_c", "MPI_Type_create_hvector_c", "MPI_Type_indexed_c",
    "MPI_Type_create_hindexed_c", "MPI_Type_create_indexed_block_c", "MPI_Type_create_hindexed_block_c",
    "MPI_Type_create_struct_c", "MPI_Type_create_resized_c", "MPI_Type_create_subarray_c", "MPI_Type_create_darray_c",
    "MPI_Type_get_envelope_c", "MPI_Type_get_contents_c",
    "MPI_Pack_c", "MPI_Unpack_c", "MPI_Pack_size_c", "MPI_Pack_external_c", "MPI_Unpack_external_c",
    "MPI_Pack_external_size_c", "MPI_Win_create_c", "MPI_Win_allocate_c", "MPI_Win_allocate_shared_c",
    "MPI_Win_shared_query_c", "MPI_File_get_type_extent_c", "MPI_Op_create_c",
    "MPI_Register_datarep_c",  # mpi/io/view.cpp
    # mpi/p2p/bsend.cpp
    "MPI_Buffer_attach_c", "MPI_Buffer_detach_c", "MPI_Comm_attach_buffer_c", "MPI_Comm_detach_buffer_c",
    "MPI_Session_attach_buffer_c", "MPI_Session_detach_buffer_c",
    # mpi/coll/reduce_scatter.cpp: MPI_Count inside
    "MPI_Reduce_scatter_c", "MPI_Ireduce_scatter_c", "MPI_Reduce_scatter_init_c", "MPI_Reduce_scatter_block_c",
    "MPI_Ireduce_scatter_block_c", "MPI_Reduce_scatter_block_init_c",
}

# The v and w collectives whose blocks beyond INT_MAX become typed blocks
# (mpi/large/wide.hpp: wide_<family>).
WIDE = {"gatherv", "scatterv", "allgatherv", "alltoallv", "alltoallw", "neighbor_allgatherv", "neighbor_alltoallv",
        "neighbor_alltoallw"}

# A count and the datatype that describes it.
TYPE_OF = {"count": "datatype", "sendcount": "sendtype", "recvcount": "recvtype", "incount": "datatype",
           "outcount": "datatype", "origin_count": "origin_datatype", "target_count": "target_datatype",
           "result_count": "result_datatype"}


def params(p):
    out = []
    for x in (s.strip() for s in p.split(",")):
        name = re.search(r"([A-Za-z_0-9]+)\s*(?:\[\])?$", x).group(1)
        out.append((x, name))
    return out


def wrapper(ret, name, p, twin_p):
    mine, theirs = params(p), params(twin_p)
    names = [n for _, n in mine]
    args = list(names)
    root = "root" if "root" in names else "-1"
    neighbor = "true" if "neighbor" in name.lower() else "false"
    body = [f"{ret} {name}({p}) {{", f'    const char *call = "{name}";', "    CallAlias alias(call);"]
    arrays, counts = [], []
    for (x, n), (tx, _) in zip(mine, theirs):
        if x == tx:
            continue
        if "[]" in x:  # int array -> ints
            send = n.startswith("s")
            length = "s.local" if "reduce_scatter" in name.lower() else ("s.out" if send else "s.in")
            cond = "s.root_side" if root == "root" else "true"
            if send and "sendbuf" in names:
                cond += " && sendbuf != MPI_IN_PLACE"
            elem = "MPI_Aint" if tx.startswith("const MPI_Aint") else "int"
            body.append(f"    const Ints<{elem}> a_{n}({n}, {cond} ? {length} : -1);")
            arrays.append(f"a_{n}")
            args[names.index(n)] = f"a_{n}.data()"
        elif n in TYPE_OF:
            t = TYPE_OF[n] if TYPE_OF[n] in names else "datatype"
            counts.append((n, t))
        else:
            raise SystemExit(f"large.py: {name}: no rule for argument {x!r} (twin: {tx!r})")
    if arrays:
        body.insert(3, f"    const Shape s = shape_of(comm, {neighbor}, {root});")
        family = re.sub(r"^I(?=[a-z])", "", name[len("MPI_"):-len("_c")]).replace("_init", "").lower()
        if family in WIDE:
            nb = "false" if family == name[len("MPI_"):-len("_c")].lower() else "true"
            run = "Run::persistent" if "_init" in name else "Run::nonblocking"
            req = "request" if "request" in names else "nullptr"
            info = "info" if "info" in names else "MPI_INFO_NULL"
            rest = ", ".join(n for n in names if n not in ("request", "info"))
            fallback = f"wide_{family}(call, {nb}, {run}, {req}, {info}, {rest})"
        else:
            raise SystemExit(f"large.py: {name}: an array beyond INT_MAX has no typed form (add it to WIDE)")
        body.append("    if (" + " || ".join(f"!{a}.ok()" for a in arrays) + f") return {fallback};")
    for n, t in counts:
        body.append(f"    const CountAs n_{n}({n}, {t});")
        args[names.index(n)] = f"n_{n}.count()"
        args[names.index(t)] = f"n_{n}.type()"
    twin = name[:-2]
    if "request" in names and counts:
        body.append(f"    const int rc = {twin}({', '.join(args)});")
        body += [f"    n_{n}.keep(request, rc);" for n, _ in counts]
        body.append("    return rc;")
    else:
        body.append(f"    return {twin}({', '.join(args)});")
    body.append("}")
    return "\n".join(body)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    decls = {n: (r, p) for r, n, p in pmpi.declarations(open(argv[2]).read())}
    out = ["// Generated by mpi/api/large.py from mpi.h: the large-count functions that",
           "// forward to their int twins (see its header).", "#include <mpi.h>", "",
           '#include "mpi/errors.hpp"', '#include "mpi/large/count_as.hpp"', '#include "mpi/large/wide.hpp"', "",
           "using namespace ftmpi::mpi;", "", 'extern "C" {']
    for name, (ret, p) in decls.items():
        if not name.endswith("_c") or name in HANDWRITTEN or name[:-2] not in decls:
            continue
        out.append(wrapper(ret, name, p, decls[name[:-2]][1]))
    out.append('}  // extern "C"')
    with open(argv[1], "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
