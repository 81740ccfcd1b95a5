#!/usr/bin/env python3
"""build_modules.py FC... -- OUTDIR SOURCES...: compiles each module source
in turn (a later one may use an earlier one), leaving the .mod files in
OUTDIR. The objects are not kept: the modules hold no code."""
import os
import subprocess
import sys
import tempfile


def main(argv):
    sep = argv.index("--")
    fc, outdir, sources = argv[1:sep], argv[sep + 1], argv[sep + 2:]
    with tempfile.TemporaryDirectory() as tmp:
        for src in sources:
            obj = os.path.join(tmp, os.path.basename(src) + ".o")
            cmd = fc + ["-c", src, "-o", obj, "-J", outdir, "-I", outdir, "-Wall", "-Werror"]
            if subprocess.call(cmd) != 0:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
