#!/usr/bin/env python3
"""Opcode counts of the FlashAttention kernels in cuobjdump -sass output (a device-call diagnostic, issue 13;
scripts/device/fa.sh part sass).

Usage: sass_loop_ops.py SASS_FILE [--ptxas BUILD_LOG]  (one cuobjdump -sass dump; every function in it). Per function
with HGMMA: its HGMMA, local-memory (LDL/STL: must be 0), barrier (BAR.SYNC/BAR.ARV) and R2UR counts; its loops that
hold at least 8 HGMMA (the innermost first) and, for the innermost, how many of its instructions run on the uniform
datapath (U* opcodes) and how many R2UR conversions it has: a Q-loop whose wgmma descriptors left the uniform
datapath shows R2UR in the tens (f979823's split-tail kernel: 48 per iteration against 16). With --ptxas, the
registers, stack and spills ptxas -v printed into the build log for each flash_attention_kernel instantiation that
build compiled (spills must be 0; none listed: the library was already built).
Exit codes: 0 report printed, 2 bad usage or a missing input.
"""
import collections
import os
import re
import sys


def functions(path):
    name, ins = None, []
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.search(r"Function : (\S+)", line)
        if m:
            if name:
                yield name, ins
            name, ins = m.group(1), []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;?\s*/\*", line)
        if m and name:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    if name:
        yield name, ins


def short(name):
    """flash_attention_kernel<mode, d, schedule, cluster[, split]> as 'mode 1 d 128 schedule 0 cluster 2 split 1'."""
    m = re.search(r"EpilogueModeE(\d)ELi(\d+)ELNS1_16MainloopScheduleE(\d)ELi(\d)E(?:Lb(\d)E)?", name)
    if not m:
        return name[-60:]
    mode, d, schedule, cluster, split = m.groups()
    return f"mode {mode} d {d} schedule {schedule} cluster {cluster}" + (f" split {split}" if split else "")


def ptxas(path):
    """Registers, stack and spills of each flash_attention_kernel that ptxas -v reported in a build log."""
    text = open(path, encoding="utf-8", errors="replace").read()
    n = bad = 0
    for m in re.finditer(r"Compiling entry function '(\S*flash_attention_kernel\S*)' for 'sm_\w+'\n(.*?)Compile time",
                         text, re.S):
        regs = re.search(r"Used (\d+) registers", m.group(2))
        sp = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", m.group(2))
        if regs and sp:
            n += 1
            bad += sp.group(2) != "0" or sp.group(3) != "0"
            print(f"{short(m.group(1))}: regs {regs[1]}, stack {sp[1]} B, spill stores/loads {sp[2]}/{sp[3]} B")
    print(f"ptxas: {n} FlashAttention instantiations compiled in this build, {bad} with spills")


def main():
    args = sys.argv[1:]
    usage = "(usage: sass_loop_ops.py SASS_FILE [--ptxas BUILD_LOG])"
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--ptxas") or args[0].startswith("-"):
        print(f"sass_loop_ops: error: expected one SASS file and optionally --ptxas BUILD_LOG, got {args} {usage}",
              file=sys.stderr)
        sys.exit(2)
    # Every input exists before anything is printed: a missing file is bad input (exit 2), not an empty report.
    for label, path in [("SASS file", args[0])] + ([("build log (--ptxas)", args[2])] if len(args) == 3 else []):
        if not os.path.isfile(path):
            print(f"sass_loop_ops: error: no {label} '{path}' {usage}", file=sys.stderr)
            sys.exit(2)
    for name, ins in functions(args[0]):
        at = {a: i for i, (a, _) in enumerate(ins)}
        hgmma = [i for i, (_, t) in enumerate(ins) if "HGMMA" in t]
        if hgmma:
            ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", t).split()[0].split(".")[0] for _, t in ins)
            print(f"{short(name)}: HGMMA {len(hgmma)}, LDL {ops['LDL']}, STL {ops['STL']}, BAR {ops['BAR']}, "
                  f"R2UR {ops['R2UR']}")
        loops = []
        for i, (a, t) in enumerate(ins):
            m = re.search(r"BRA\s.*?0x([0-9a-f]+)", t)
            if m and int(m.group(1), 16) < a and int(m.group(1), 16) in at:
                j = at[int(m.group(1), 16)]
                n = sum(1 for k in hgmma if j <= k <= i)
                if n >= 8:
                    loops.append((i - j + 1, j, i, n))
        if not loops:
            continue
        size, j, i, n = min(loops)
        ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", t).split()[0] for _, t in ins[j:i + 1])
        uniform = sum(c for op, c in ops.items() if op.startswith("U"))
        print(f"{short(name)}: Q-loop {size} instructions, {n} HGMMA, {uniform} uniform, R2UR {ops['R2UR']}")
    if len(args) == 3:
        ptxas(args[2])


if __name__ == "__main__":
    main()
