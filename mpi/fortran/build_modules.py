#!/usr/bin/env python3
"""build_modules.py FC... -- OUTDIR SOURCES...: compiles each source in turn
(a later one may use an earlier one's module), leaving the .mod files in
OUTDIR. The modules hold no code: their objects are not kept. The last
source holds code (mpi_f08's wrappers): its object is kept, as OUTDIR/<name>.o."""
import os
import subprocess
import sys
import tempfile


def main(argv):
    sep = argv.index("--")
    fc, outdir, sources = argv[1:sep], argv[sep + 1], argv[sep + 2:]
    with tempfile.TemporaryDirectory() as tmp:
        for i, src in enumerate(sources):
            name = os.path.splitext(os.path.basename(src))[0] + ".o"
            obj = os.path.join(outdir if i == len(sources) - 1 else tmp, name)
            cmd = fc + ["-c", src, "-o", obj, "-J", outdir, "-I", outdir, "-fPIC", "-O2", "-g", "-Wall", "-Werror",
                         # default INTEGER and LOGICAL are C_INT-sized (gfortran)
                         "-Wno-c-binding-type"]
            if subprocess.call(cmd) != 0:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
