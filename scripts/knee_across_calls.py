#!/usr/bin/env python3
"""The same isolated bursts past Q's knee across many calibration files (calls): is what a burst absorbs
reproducible from call to call, and does it fall with V? (issue 28; docs/lab-notes/2026-12-08.md)

For every calibration given and every isolated, measured host burst at the chosen K, the burst-level issue time (the
slowest producer's, per repetition: issue_time_max_s) as p10 / median / max over repetitions, and the capacity it
shows, c = V - R T, at three ends: c_hi = V - R_lo T_p10 (the fastest repetitions, R's ci95 bottom; the upper end of
PlatformModel::capacity_bracket past the floor), c_med = V - R T_median, c_lo = V - R_hi T_max (the slowest
repetition, R's ci95 top; the lower end). Then, per device and K: the spread of c_med across the files at each V, and
in how many files c_med, c_hi and c_lo fall (do not rise) from each measured V past the knee to the next. Last, the
cross-call coverage of the bracket's two ends past the floor (coverage()). Nothing is fitted here.

Usage: python3 scripts/knee_across_calls.py CAL.json[.gz] ... [--K 132] [--min-V 3e6] [--json OUT.json]
Exit codes: 0, 2 bad usage or an unreadable file (nothing written).
"""
import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fa_attach_baseline import write_atomically  # noqa: E402
from knee_table import load  # noqa: E402
from plot_io import output_path  # noqa: E402


def bursts_of(path, doc, ks, min_v):
    model = doc.get("model") or {}
    r = model.get("R_Bps")
    ci = model.get("R_ci95") or [r, r]
    if not isinstance(r, (int, float)) or not r > 0:
        raise ValueError(f"model.R_Bps is {r!r}: no fitted drain rate to compute c with")
    device = ((doc.get("meta") or {}).get("devices") or [{}])[0].get("name") or "unknown device"
    out = []
    for p in doc["points"]:
        s = p["spec"]
        if s.get("suite") != "isolated" or s.get("target") != "host" or p.get("skipped") or p.get("clock_flagged"):
            continue
        if s["K"] not in ks:
            continue
        v = s["K"] * s["B_bytes"]
        t = p.get("issue_time_max_s") or {}
        if v < min_v or not all(isinstance(t.get(k), (int, float)) for k in ("p10", "median", "max")):
            continue
        out.append({"file": path, "device": device, "K": s["K"], "V_bytes": v,
                    "address_mode": s.get("address_mode", "fresh"), "R_Bps": r, "R_ci95": ci,
                    "T_p10_s": t["p10"], "T_median_s": t["median"], "T_max_s": t["max"],
                    "c_hi_bytes": v - ci[0] * t["p10"], "c_med_bytes": v - r * t["median"],
                    "c_lo_bytes": v - ci[1] * t["max"]})
    return out


def floor_bound(doc, k):
    """fit.Q[K].floor_lower_bound_bytes: the bound past which PlatformModel::capacity_bracket leaves the floor."""
    for q in ((doc.get("model") or {}).get("fit") or {}).get("Q") or []:
        if isinstance(q, dict) and q.get("K") == k and isinstance(q.get("floor_lower_bound_bytes"), (int, float)):
            return q["floor_lower_bound_bytes"]
    return None


def bracket_ends(file_rows, bound, v):
    """The two ends PlatformModel::capacity_bracket gives a burst of volume v from one file's bursts (rows of one K,
    one address mode) past the floor's bound: lower = the lowest c_lo over V'' in (bound, max(2v, first V'' >= v)]
    (0 with no V'' >= v), upper = c_hi of the nearest V'' <= v (None where there is none or it is negative)."""
    past = [r for r in file_rows if r["V_bytes"] > bound]
    above = [r["V_bytes"] for r in past if r["V_bytes"] >= v]
    lower = 0.0
    if above:
        window = [r for r in past if r["V_bytes"] <= max(2 * v, min(above))]
        lower = max(0.0, min(r["c_lo_bytes"] for r in window))
    below = [r for r in past if r["V_bytes"] <= v]
    upper = None
    if below:
        near = max(r["V_bytes"] for r in below)
        c = max(r["c_hi_bytes"] for r in below if r["V_bytes"] == near)
        upper = c if c >= 0 else None
    return lower, upper


def coverage(rows, bounds, volumes):
    """For each file (the calibration a prediction would use) and each V: do the other files' burst-level median c
    at V (same device, K, address mode) lie in this file's [lower, upper]? Counted for the upper end alone and for
    both; files whose R is far from the others' (their bursts drain slower than R: the model does not hold) count
    as they are."""
    groups = {}
    for row in rows:
        groups.setdefault((row["device"], row["K"], row["address_mode"]), {}).setdefault(row["file"], []).append(row)
    out = {"cases": 0, "upper_holds": 0, "both_hold": 0, "no_upper": 0, "misses": []}
    for (device, k, mode), by_file in groups.items():
        for path, file_rows in by_file.items():
            bound = bounds.get((path, k))
            if bound is None:
                continue
            for v in volumes:
                if v <= bound:
                    continue
                lower, upper = bracket_ends(file_rows, bound, v)
                for other, other_rows in by_file.items():
                    if other == path:
                        continue
                    for r in other_rows:
                        if r["V_bytes"] != v:
                            continue
                        out["cases"] += 1
                        c = r["c_med_bytes"]
                        up = upper is None or c <= upper + 1
                        out["no_upper"] += upper is None
                        out["upper_holds"] += up
                        out["both_hold"] += up and c >= lower - 1
                        if not up:
                            out["misses"].append({"device": device, "K": k, "V_bytes": v, "calibration": path,
                                                  "other": other, "upper_bytes": upper, "c_med_bytes": c})
    return out


def summary(rows):
    groups = {}
    for row in rows:
        groups.setdefault((row["device"], row["K"], row["address_mode"]), []).append(row)
    out = []
    for (device, k, mode), rs in sorted(groups.items()):
        by_v = {}
        for row in rs:
            by_v.setdefault(row["V_bytes"], []).append(row["c_med_bytes"])
        spread = [{"V_bytes": v, "files": len(cs), "c_med_min_bytes": min(cs), "c_med_median_bytes": statistics.median(cs),
                   "c_med_max_bytes": max(cs)} for v, cs in sorted(by_v.items())]
        steps = {"c_hi_bytes": [0, 0], "c_med_bytes": [0, 0], "c_lo_bytes": [0, 0]}  # [fell or held, rose]
        by_file = {}
        for row in rs:
            by_file.setdefault(row["file"], []).append(row)
        for file_rows in by_file.values():
            file_rows.sort(key=lambda r: r["V_bytes"])
            for a, b in zip(file_rows, file_rows[1:]):
                for key, count in steps.items():
                    count[0 if b[key] <= a[key] else 1] += 1
        out.append({"device": device, "K": k, "address_mode": mode, "files": len(by_file), "c_med_by_V": spread,
                    "steps_in_V": {key: {"fell_or_held": c[0], "rose": c[1]} for key, c in steps.items()}})
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("calibrations", nargs="+")
    ap.add_argument("--K", default="132", help="producer counts, e.g. 66,132 (default 132: FA-A2A's burst shape)")
    ap.add_argument("--min-V", type=float, default=3e6, help="smallest burst volume, bytes (default 3e6: past the knee)")
    ap.add_argument("--json", help="also write the summary and coverage as JSON here (refused if it is an input)")
    a = ap.parse_args(argv)
    try:
        ks = {int(k) for k in a.K.split(",") if k.strip()}
    except ValueError:
        print(f"knee_across_calls: --K '{a.K}' is not a list of integers (e.g. 66,132)", file=sys.stderr)
        return 2
    if not ks or not math.isfinite(a.min_V):
        print(f"knee_across_calls: --K '{a.K}' / --min-V {a.min_V}: expected integers and a number of bytes "
              "(e.g. --K 132 --min-V 3e6)", file=sys.stderr)
        return 2
    if a.json:
        output_path("knee_across_calls", a.json, a.calibrations, suffix=".json", flag="--json")
    rows, bounds = [], {}
    for path in a.calibrations:
        try:
            doc = load(path)
            rows += bursts_of(path, doc, ks, a.min_V)
            for k in ks:
                bounds[(path, k)] = floor_bound(doc, k)
        except (OSError, EOFError, ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
            print(f"knee_across_calls: cannot read {path} as a calibration file ({e})", file=sys.stderr)
            return 2
    groups = summary(rows)
    for g in groups:
        print(f"{g['device']}, K {g['K']}, {g['address_mode']}: {g['files']} files")
        for s in g["c_med_by_V"]:
            print(f"  V {s['V_bytes'] / 1e6:7.2f} MB: c_med {s['c_med_min_bytes'] / 1e6:6.2f} .. "
                  f"{s['c_med_max_bytes'] / 1e6:6.2f} MB (median {s['c_med_median_bytes'] / 1e6:.2f}) over {s['files']} files")
        print("  steps to the next V: " + "; ".join(f"{k[:-6]} fell or held {v['fell_or_held']}, rose {v['rose']}"
                                                     for k, v in g["steps_in_V"].items()))
    volumes = sorted({r["V_bytes"] for r in rows})
    cov = coverage(rows, bounds, volumes)
    print(f"other calls' burst-level median c at or below the upper end (nearest V'' <= V, c_hi = V'' - R_lo T_p10): "
          f"{cov['upper_holds']} of {cov['cases']} ({cov['no_upper']} with no upper end); within both ends "
          f"{cov['both_hold']} of {cov['cases']}")
    if a.json:
        write_atomically(a.json, {"schema": "xstage.knee_across_calls", "K": sorted(ks), "min_V_bytes": a.min_V,
                                  "calibrations": a.calibrations, "summary": groups, "coverage": cov})
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
