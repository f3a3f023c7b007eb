#!/usr/bin/env python3
"""Opcode counts of the wgmma Q-loop in cuobjdump -sass output (a device-call diagnostic, issue 13).

Usage: sass_loop_ops.py SASS_FILE  (one cuobjdump -sass dump; every function in it). Per function: its loops that
hold at least 8 HGMMA (the innermost first) and, for the innermost, how many of its instructions run on the uniform
datapath (U* opcodes) and how many R2UR conversions it has: a Q-loop whose wgmma descriptors left the uniform
datapath shows R2UR in the tens (f979823's split-tail kernel: 48 per iteration against 16).
"""
import collections
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


def main():
    for name, ins in functions(sys.argv[1]):
        at = {a: i for i, (a, _) in enumerate(ins)}
        hgmma = [i for i, (_, t) in enumerate(ins) if "HGMMA" in t]
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


if __name__ == "__main__":
    main()
