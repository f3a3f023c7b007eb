#!/usr/bin/env python3
"""Between-call spread of a MegaMoE matrix measured in two device calls (issue 29 item 4): per configuration (shape,
routing, precision, K_SM, target) and variant, the ratio of the second call's median time to the first's; summarized
per (target, K_SM, variant) as n, median, min, max. Inputs: two matrix.tar.gz files (or result JSON files, any mix)
holding `xstage-bench megamoe` results. Prints JSON on stdout. Post-processing only.
Usage: moe_between_calls.py FIRST.tar.gz SECOND.tar.gz > spread.json"""
import json
import statistics
import sys
import tarfile


def docs_of(path):
    if path.endswith(".tar.gz"):
        with tarfile.open(path) as t:
            return [json.load(t.extractfile(m)) for m in t.getmembers() if m.isfile() and m.name.endswith(".json")]
    with open(path) as f:
        return [json.load(f)]


def medians(path):
    out = {}
    for doc in docs_of(path):
        for p in doc.get("points", []):
            if p.get("status") != "ok" or p.get("suite") != "megamoe":
                continue
            a = p["axes"]
            key = (a["shape"], a["routing"], a["precision"], a["K_SM"], a["target"])
            out[key] = {v: s["median"] for v, s in p["variants"].items()}
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("moe_between_calls: error: give two matrix files (FIRST SECOND); see --help in the docstring")
    first, second = medians(sys.argv[1]), medians(sys.argv[2])
    groups = {}
    for key in sorted(set(first) & set(second)):
        for variant in ("interleaved", "expert_wave"):
            if variant in first[key] and variant in second[key] and first[key][variant] > 0:
                groups.setdefault((key[4], key[3], variant), []).append(second[key][variant] / first[key][variant])
    rows = [{"target": t, "K_SM": k, "variant": v, "n": len(r), "ratio_median": statistics.median(r),
             "ratio_min": min(r), "ratio_max": max(r)} for (t, k, v), r in sorted(groups.items())]
    json.dump({"schema": {"name": "xstage.moe_between_calls", "version": 1}, "first": sys.argv[1],
               "second": sys.argv[2], "what": "second call's median time / first call's, per configuration",
               "rows": rows}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
