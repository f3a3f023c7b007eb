#!/usr/bin/env python3
"""Fails when ptxas serializes the wgmmas of a kernel: recompiles every src/xs/kernels/**/*.cu that issues wgmma with its
own command from the build's compile_commands.json (the object goes to a scratch folder; the build is untouched)
and looks for ptxas's "Potential Performance Loss: wgmma.mma_async instructions are serialized" notes (C7510 to
C7520: a warpgroup.arrive or wait the compiler had to insert, e.g. wgmma issued in a loop with a runtime trip count
or in a divergent path). Such a kernel still computes the right answer, so no GPU test notices; its tensor cores
idle between wgmmas (the MegaMoE fp8 kernels ran so until 2026-12-06, issue 29).

Usage: python3 scripts/check_wgmma_serialization.py BUILD_DIR
Exit codes: 0 none serialized, 1 a kernel is serialized (each note printed), 2 bad usage (no compile_commands.json,
a compile failed).
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

NOTE = re.compile(r"\(C75\d\d\) Potential Performance Loss: wgmma\.mma_async instructions are serialized[^']*'([^']+)'")


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    db = os.path.join(argv[0], "compile_commands.json")
    try:
        with open(db, encoding="utf-8") as f:
            commands = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_wgmma_serialization: {db}: not readable ({e}); configure the build first", file=sys.stderr)
        return 2
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    kernels = []
    if not isinstance(commands, list) or not all(isinstance(c, dict) and isinstance(c.get("directory"), str) and
                                                 isinstance(c.get("file"), str) for c in commands):
        print(f"check_wgmma_serialization: {db}: expected a list of {{directory, file, command}} entries", file=sys.stderr)
        return 2
    for c in commands:
        path = os.path.normpath(os.path.join(c["directory"], c["file"]))
        if not path.startswith(os.path.join(root, "src", "xs", "kernels") + os.sep) or not path.endswith(".cu"):
            continue
        with open(path, encoding="utf-8") as f:
            if "wgmma" in f.read():
                kernels.append((path, c))
    if not kernels:
        print("check_wgmma_serialization: no kernel issues wgmma in this build", file=sys.stderr)
        return 2
    serialized = 0
    with tempfile.TemporaryDirectory() as scratch:
        for path, c in kernels:
            try:
                args = shlex.split(c["command"]) if "command" in c else list(c["arguments"])
            except (ValueError, KeyError, TypeError) as e:
                print(f"check_wgmma_serialization: {path}: unreadable compile command ({e})", file=sys.stderr)
                return 2
            if "-o" not in args[:-1]:
                print(f"check_wgmma_serialization: {path}: no '-o FILE' in its compile command", file=sys.stderr)
                return 2
            args[args.index("-o") + 1] = os.path.join(scratch, "k.o")
            if not any("-Xptxas" in a and "-v" in a for a in args):
                args.append("-Xptxas=-v")
            try:
                run = subprocess.run(args, cwd=c["directory"], capture_output=True, text=True)
            except OSError as e:
                print(f"check_wgmma_serialization: {path}: cannot run its compile command ({e})", file=sys.stderr)
                return 2
            if run.returncode != 0:
                print(f"check_wgmma_serialization: {path}: the compile failed\n{run.stderr[-2000:]}", file=sys.stderr)
                return 2
            if "ptxas info" not in run.stdout + run.stderr:
                print(f"check_wgmma_serialization: {path}: its compile printed no ptxas report (not an nvcc command "
                      "with -Xptxas -v?): nothing checked", file=sys.stderr)
                return 2
            notes = sorted({(m.group(0).split(":")[1].split(" in the function")[0].strip(), m.group(1))
                            for m in NOTE.finditer(run.stdout + run.stderr)})
            rel = os.path.relpath(path, root)
            if notes:
                serialized += len(notes)
                for what, fn in notes:
                    print(f"{rel}: {fn}: {what}")
            else:
                print(f"{rel}: no wgmma serialized")
    return 1 if serialized else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
