#!/usr/bin/env python3
"""The isolated bursts of a calibration file around Q's knee, per K (issue 28: is the knee eq. 7's hard knee?).

Eq. 7 says an isolated burst of V bytes issues in max(T_iss^0(K,V), (V - Q)/R). For every isolated point this prints
V, the mean producer's issue time and the slowest producer's (the one the fitter models: fit::modelled_issue_time),
and c = V - R T for both: under eq. 7, c is V on the floor (T ~ 0) and Q on the drain branch. R is the file's own
fitted drain rate. Nothing is fitted here.

A row whose c is negative (the burst took longer than draining all of it at R: a slow launch or a drift) is flagged
"slow" and says nothing about Q. Far above the knee c is a small difference of large numbers: R's own interval moves
it by V x (R_hi - R_lo) / R (the "c_span_MB" column).

Usage: python3 scripts/knee_table.py CALIBRATION.json[.gz] [--K 66,132] [--min-V BYTES] [--json OUT.json]
Exit codes: 0, 2 bad usage or an unreadable file (nothing written).
"""
import argparse
import gzip
import math
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fa_attach_baseline import write_atomically  # noqa: E402
from plot_io import output_path  # noqa: E402


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def rows_of(doc, ks, min_v):
    r_bps = doc["model"]["R_Bps"]
    ci = doc["model"].get("R_ci95") or [r_bps, r_bps]
    if not isinstance(r_bps, (int, float)) or not r_bps > 0:
        raise ValueError(f"model.R_Bps is {r_bps!r}: no fitted drain rate to compute c with")
    out = []
    for p in doc["points"]:
        s = p["spec"]
        if s.get("suite") != "isolated" or p.get("skipped") or (ks and s["K"] not in ks):
            continue
        v = s["K"] * s["B_bytes"]
        if v < min_v:
            continue
        mean = p["issue_time_s"]["median"]
        slowest = (p.get("issue_time_max_s") or {}).get("median")
        out.append({"K": s["K"], "B_bytes": s["B_bytes"], "V_bytes": v, "repetitions": len(p["issue_time_s"]["samples"]),
                    "issue_mean_s": mean, "issue_slowest_s": slowest,
                    "c_mean_bytes": v - r_bps * mean,
                    "c_slowest_bytes": None if slowest is None else v - r_bps * slowest,
                    "c_span_bytes": v * (ci[1] - ci[0]) / r_bps,
                    "slow": (v - r_bps * (slowest if slowest is not None else mean)) < 0})
    out.sort(key=lambda r: (r["K"], r["V_bytes"]))
    return r_bps, out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("calibration")
    ap.add_argument("--K", default="", help="producer counts to show, e.g. 66,132 (default: all)")
    ap.add_argument("--min-V", type=float, default=0.0, help="smallest burst volume shown, in bytes")
    ap.add_argument("--json", help="also write the rows as JSON here (refused if it is the input)")
    a = ap.parse_args(argv)
    try:
        ks = {int(k) for k in a.K.split(",") if k.strip()}
    except ValueError:
        print(f"knee_table: --K '{a.K}' is not a list of integers, e.g. 66,132", file=sys.stderr)
        return 2
    if not math.isfinite(a.min_V):
        print(f"knee_table: --min-V {a.min_V} is not a number of bytes, e.g. 0.9e6", file=sys.stderr)
        return 2
    if a.json:  # never the input, a link or a folder (plot_io.output_path's rules)
        output_path("knee_table", a.json, [a.calibration], suffix=".json", flag="--json")
    try:
        doc = load(a.calibration)
        r_bps, rows = rows_of(doc, ks, a.min_V)
    except (OSError, EOFError, ValueError, KeyError, TypeError) as e:
        print(f"knee_table: cannot read {a.calibration} as a calibration file: {e}", file=sys.stderr)
        return 2
    print(f"# {a.calibration}: R = {r_bps / 1e9:.2f} GB/s (the file's fit); c = V - R T (eq. 7: V on the floor, Q on "
          "the drain branch)")
    print(f"{'K':>4} {'V MB':>8} {'reps':>4} {'T mean us':>10} {'T slowest us':>12} {'c mean MB':>9} {'c slowest MB':>12} "
          f"{'c_span_MB':>9}")
    for r in rows:
        slow = "-" if r["issue_slowest_s"] is None else f"{r['issue_slowest_s'] * 1e6:12.2f}"
        cs = "-" if r["c_slowest_bytes"] is None else f"{r['c_slowest_bytes'] / 1e6:12.3f}"
        print(f"{r['K']:>4} {r['V_bytes'] / 1e6:8.3f} {r['repetitions']:>4} {r['issue_mean_s'] * 1e6:10.2f} {slow:>12} "
              f"{r['c_mean_bytes'] / 1e6:9.3f} {cs:>12} {r['c_span_bytes'] / 1e6:9.3f}{'  slow' if r['slow'] else ''}")
    if a.json:
        write_atomically(a.json, {"calibration": a.calibration, "R_Bps": r_bps, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
