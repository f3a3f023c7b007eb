#!/usr/bin/env python3
"""Summarizes an A/B of two MegaMoE kernel libraries (scripts/device/moe_ab.sh): files named
ab-<precision>-<base|new>-<round>.json, each a scripts/moe_vs_grouped_mm.py result of one configuration. Per
precision and contender: each library's median per round, the new/base time ratio per round (the same round's
two processes, run back to back) and their range, and each library's kernel-over-torch ratios (torch runs in
every process: the yardstick that shows drift between processes). Verification failures are listed; a round
where either side failed is not compared.

Usage: python3 scripts/moe_ab_summary.py --base SHA --new SHA --out SUMMARY.json FILE...
Exit codes: 0 written, 2 bad usage or unreadable input (one line naming the file and the accepted form).
"""
import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile

NAME = re.compile(r"^ab-(bf16|fp8)-(base|new)-(\d+)\.json$")


def fail(message):
    print(f"moe_ab_summary: {message}", file=sys.stderr)
    sys.exit(2)


def finite_positive(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def load(path):
    m = NAME.match(os.path.basename(path))
    if not m:
        fail(f"{path}: not named ab-<bf16|fp8>-<base|new>-<round>.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: not readable JSON ({e})")
    points = doc.get("points") if isinstance(doc, dict) else None
    if not isinstance(points, list) or len(points) != 1 or not isinstance(points[0], dict):
        fail(f"{path}: expected a moe_vs_grouped_mm result with one point")
    point = points[0]
    contenders = point.get("contenders", {})
    if not isinstance(contenders, dict) or not all(isinstance(c, dict) for c in contenders.values()):
        fail(f"{path}: points[0].contenders must be an object of {{name: {{median_s, ...}}}}")
    for name, c in contenders.items():
        if "median_s" in c and not finite_positive(c["median_s"]):
            fail(f"{path}: contenders.{name}.median_s must be a positive finite number of seconds")
    if not isinstance(point.get("verification", {}), dict):
        fail(f"{path}: points[0].verification must be an object")
    prec = (point.get("config") or {}).get("precision") if isinstance(point.get("config"), dict) else None
    if prec is not None and prec != m.group(1):
        fail(f"{path}: named {m.group(1)} but its config.precision is {prec}")
    return m.group(1), m.group(2), int(m.group(3)), doc


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    if not a.out or os.path.isdir(a.out):
        fail(f"--out '{a.out}': expected a file path (not a folder)")
    if os.path.islink(a.out):
        fail(f"--out {a.out} is a symlink: name a regular file")
    if not os.path.isdir(os.path.dirname(os.path.abspath(a.out))):
        fail(f"--out {a.out}: its folder does not exist")
    for f in a.files:
        if os.path.realpath(a.out) == os.path.realpath(f) or (
                os.path.exists(a.out) and os.path.exists(f) and os.path.samefile(a.out, f)):
            fail(f"--out {a.out} is also an input ({f})")
    if len({os.path.realpath(f) for f in a.files}) != len(a.files):
        fail("an input is given twice")
    runs = {}  # (prec, round) -> {label: point}
    meta = None
    for path in a.files:
        prec, label, rnd, doc = load(path)
        meta = meta or doc.get("meta")
        if label in runs.get((prec, rnd), {}):
            fail(f"{path}: a second {prec} {label} file for round {rnd}")
        runs.setdefault((prec, rnd), {})[label] = doc["points"][0]
    out = {"schema": {"name": "xstage.moe_ab", "version": 1}, "base": a.base, "new": a.new, "meta": meta,
           "definitions": {"ratio_new_over_base": "median time of the new library / the base library's, same "
                                                  "round (two processes back to back); < 1: the new one is faster",
                           "kernel_over_torch": "each process's ratios (moe_pairing.ratios): >= 1 means the kernel is "
                                                "at least as fast as torch in that process"},
           "precisions": {}}
    lines = []
    for prec in sorted({p for p, _ in runs}):
        rounds = sorted(r for p, r in runs if p == prec)
        per = {"rounds": rounds, "contenders": {}, "not_compared": [], "kernel_over_torch": {}}
        for rnd in rounds:
            sides = runs[(prec, rnd)]
            for label, point in sides.items():
                per["kernel_over_torch"].setdefault(label, []).append(point.get("ratios"))
            why = None
            if set(sides) != {"base", "new"}:
                why = "only " + ", ".join(sorted(sides)) + " ran"
            elif any(sides[s].get("status") != "ok" for s in sides):
                why = "; ".join(f"{s}: status {sides[s].get('status')} {sides[s].get('reason', '')}".strip()
                                for s in sorted(sides) if sides[s].get("status") != "ok")
            elif sides["base"].get("config") != sides["new"].get("config"):
                why = "the two sides ran different configurations"
            else:
                failed = [f"{s} {name}" for s in sorted(sides)
                          for name, v in (sides[s].get("verification") or {}).items()
                          if isinstance(v, dict) and v.get("passed") is False]
                if failed:
                    why = "verification failed: " + ", ".join(failed)
            if why:
                per["not_compared"].append({"round": rnd, "why": why})
                lines.append(f"{prec} round {rnd}: NOT COMPARED ({why})")
                continue
            for name, c in sides["new"].get("contenders", {}).items():
                b = sides["base"].get("contenders", {}).get(name)
                if not b or not c.get("median_s") or not b.get("median_s"):
                    continue
                entry = per["contenders"].setdefault(name, {"base_median_s": [], "new_median_s": [],
                                                            "ratio_new_over_base": []})
                entry["base_median_s"].append(b["median_s"])
                entry["new_median_s"].append(c["median_s"])
                entry["ratio_new_over_base"].append(c["median_s"] / b["median_s"])
        if not per["contenders"]:
            lines.append(f"{prec}: no round compared")
        for name, e in per["contenders"].items():
            r = e["ratio_new_over_base"]
            e["ratio_range"] = [min(r), max(r)]
            e["ratio_median"] = statistics.median(r)
            lines.append(f"{prec} {name:24s} new/base {' '.join(f'{x:.3f}' for x in r)} over {len(r)} of "
                         f"{len(rounds)} rounds  "
                         f"(base {statistics.median(e['base_median_s']) * 1e6:.0f} us, "
                         f"new {statistics.median(e['new_median_s']) * 1e6:.0f} us)")
        out["precisions"][prec] = per
    d = os.path.dirname(os.path.abspath(a.out))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".ab-summary.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    os.replace(tmp, a.out)
    print("\n".join(lines) or "no contender compared")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
