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
import hashlib
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fa_attach_baseline import write_atomically  # noqa: E402
from knee_table import load  # noqa: E402
from plot_io import output_path  # noqa: E402


def bursts_of(path, doc, ks, min_v):
    """The host isolated bursts at K in ks with V >= min_v, each with its three c ends (rows of the table)."""
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


def bracket_inputs(doc):
    """What PlatformModel::capacity_bracket reads from a file: R and its interval, the fit.Q evidence per K, the
    identified Q rows, and the isolated bursts as fit::load_platform_model keeps them (measured, not clock-flagged,
    with issue_time_max_s; every address mode together, as the model does)."""
    model = doc.get("model") or {}
    r = model.get("R_Bps")
    ci = model.get("R_ci95") or [r, r]
    evidence = {}
    for q in (model.get("fit") or {}).get("Q") or []:
        if isinstance(q, dict) and isinstance(q.get("K"), int):
            num = lambda key: q.get(key) if isinstance(q.get(key), (int, float)) else None  # noqa: E731
            evidence[q["K"]] = {"floor": num("floor_lower_bound_bytes"), "drain_start": num("drain_start_V_bytes"),
                                "branch": None if num("branch_estimate_bytes") is None
                                else max(0.0, num("branch_estimate_bytes"))}
    identified = [q for q in model.get("Q") or [] if isinstance(q, dict) and q.get("bound") == "fit"
                  and q.get("constrained", False) and isinstance(q.get("ci95"), list)]
    bursts = []
    for p in doc.get("points") or []:
        s = p.get("spec") or {}
        t = p.get("issue_time_max_s") or {}
        if s.get("suite") != "isolated" or p.get("skipped") or p.get("clock_flagged"):
            continue
        if not all(isinstance(t.get(k), (int, float)) for k in ("p10", "max")):
            continue
        bursts.append((s["K"], s["K"] * s["B_bytes"], t["p10"], t["max"]))
    return {"R": r, "R_lo": ci[0], "R_hi": ci[1], "R_fit": model.get("R_bound", "fit") == "fit",
            "evidence": evidence, "identified": identified, "bursts": sorted(bursts)}


def bracket_ends(inp, k, v):
    """capacity_bracket(K, V)'s two ends where they come from the measured bursts (the drain branch below the floor,
    V past the floor's bound), as (lower, upper); None where the bursts set neither (Q identified at K, the branch
    above its floor, V on the floor). upper is None where no drained burst bounds it (+inf)."""
    if any(q.get("K") == k for q in inp["identified"]):
        return None
    branch_k = max((kk for kk, e in inp["evidence"].items() if kk <= k and e["branch"] is not None), default=None)
    floors = [e["floor"] for kk, e in inp["evidence"].items() if kk <= k and e["floor"]]
    floor_lower = max(floors + [q["ci95"][0] for q in inp["identified"] if q["K"] <= k], default=0.0)
    if branch_k is None:
        return None
    e = inp["evidence"][branch_k]
    bound = e["floor"] or 0.0
    if v <= bound or not e["branch"] < bound or floor_lower <= 0:
        return None
    # Lower: lowest_measured_capacity (largest K'' <= K with bursts; 0 without an R interval or a V'' >= V).
    lower = 0.0
    ks_low = [b[0] for b in inp["bursts"] if b[0] <= k]
    r_hi_ok = inp["R_fit"] and inp["R_hi"] > inp["R"]
    if ks_low and r_hi_ok:
        kb = max(ks_low)
        above = [b[1] for b in inp["bursts"] if b[0] == kb and b[1] >= v]
        if above:
            top = max(2 * v, min(above))
            lower = min((max(0.0, b[1] - inp["R_hi"] * b[3]) for b in inp["bursts"]
                         if b[0] == kb and bound < b[1] <= top), default=float("inf"))
    lower = min(lower, floor_lower)
    # Upper: highest_measured_capacity (smallest K' >= K with bursts, V'' past the bound, drained, <= V).
    upper = None
    ks_up = [b[0] for b in inp["bursts"] if b[0] >= k]
    r_lo_ok = inp["R_fit"] and 0 < inp["R_lo"] < inp["R"]
    if ks_up and r_lo_ok:
        kb = min(ks_up)
        start = (inp["evidence"].get(kb) or {}).get("drain_start") or 0
        near = [b[1] for b in inp["bursts"] if start > 0 and b[0] == kb and b[1] > bound and start <= b[1] <= v]
        if near:
            c = max(b[1] - inp["R_lo"] * b[2] for b in inp["bursts"] if b[0] == kb and b[1] == max(near))
            upper = c if c >= 0 else None
    for q in inp["identified"]:
        if q["K"] >= k and (upper is None or q["ci95"][1] < upper):
            upper = q["ci95"][1]
    return lower, upper


def coverage(rows, inputs, min_v):
    """For each file (the calibration a prediction would use) and each burst V >= min_v another file measured at the
    same device and K: does that burst's median c lie in this file's bracket ends (bracket_ends)? Counted apart:
    cases where the bursts set no end, cases with an upper end and how many lie at or below it, and how many lie
    within both ends where there is an upper end."""
    by_device = {}
    for row in rows:
        by_device.setdefault((row["device"], row["K"]), []).append(row)
    out = {"cases": 0, "no_bracket_from_bursts": 0, "no_upper_end": 0, "with_upper_end": 0, "upper_holds": 0,
           "both_hold": 0, "lower_holds_without_upper": 0, "misses": []}
    for (device, k), group in sorted(by_device.items()):
        for path in sorted({r["file"] for r in group}):
            for r in group:
                if r["file"] == path or r["V_bytes"] < min_v:
                    continue
                out["cases"] += 1
                ends = bracket_ends(inputs[path], k, r["V_bytes"])
                if ends is None:
                    out["no_bracket_from_bursts"] += 1
                    continue
                lower, upper = ends
                c = r["c_med_bytes"]
                if upper is None:
                    out["no_upper_end"] += 1
                    out["lower_holds_without_upper"] += c >= lower - 1
                    continue
                out["with_upper_end"] += 1
                up = c <= upper + 1
                out["upper_holds"] += up
                out["both_hold"] += up and c >= lower - 1
                if not up:
                    out["misses"].append({"device": device, "K": k, "V_bytes": r["V_bytes"],
                                          "address_mode": r["address_mode"], "calibration": path,
                                          "other": r["file"], "upper_bytes": upper, "c_med_bytes": c})
    return out


def summary(rows):
    groups = {}
    for row in rows:
        groups.setdefault((row["device"], row["K"], row["address_mode"]), []).append(row)
    out = []
    for (device, k, mode), rs in sorted(groups.items()):
        by_v = {}
        for row in rs:
            by_v.setdefault(row["V_bytes"], []).append(row)
        # Per V: c of each file's median repetition (sorted) and the range of its slowest repetition's c (c_lo):
        # whether the spread between calls sits in the middle of the repetitions or in their tail.
        spread = [{"V_bytes": v, "files": len(g), "c_med_min_bytes": min(r["c_med_bytes"] for r in g),
                   "c_med_median_bytes": statistics.median(r["c_med_bytes"] for r in g),
                   "c_med_max_bytes": max(r["c_med_bytes"] for r in g),
                   "c_med_each_file_bytes": sorted(round(r["c_med_bytes"]) for r in g),
                   "c_lo_min_bytes": min(r["c_lo_bytes"] for r in g), "c_lo_max_bytes": max(r["c_lo_bytes"] for r in g)}
                  for v, g in sorted(by_v.items())]
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
    if not ks or min(ks) < 1 or not math.isfinite(a.min_V):
        print(f"knee_across_calls: --K '{a.K}' / --min-V {a.min_V}: expected integers and a number of bytes "
              "(e.g. --K 132 --min-V 3e6)", file=sys.stderr)
        return 2
    # Each calibration once: a repeated path, a link or a copy would cover itself in coverage() and count twice.
    seen = {}
    for path in a.calibrations:
        try:
            with open(path, "rb") as f:
                key = hashlib.sha256(f.read()).hexdigest()
        except OSError as e:
            print(f"knee_across_calls: cannot read {path} ({e.strerror}; expected calibration files)", file=sys.stderr)
            return 2
        if key in seen:
            print(f"knee_across_calls: {path} is the same file as {seen[key]} (same content; each calibration once)",
                  file=sys.stderr)
            return 2
        seen[key] = path
    if a.json is not None:
        if not a.json:
            print("knee_across_calls: --json '' (expected a file name such as out/knee.json)", file=sys.stderr)
            return 2
        output_path("knee_across_calls", a.json, a.calibrations, suffix=".json", flag="--json")
    rows, inputs = [], {}
    for path in a.calibrations:
        try:
            doc = load(path)
            rows += bursts_of(path, doc, ks, a.min_V)
            inputs[path] = bracket_inputs(doc)
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
    cov = coverage(rows, inputs, a.min_V)
    print(f"other calls' bursts (V >= {a.min_V:.3g} B): {cov['cases']} cases; the bursts set no end in "
          f"{cov['no_bracket_from_bursts']}, no upper end in {cov['no_upper_end']}; with an upper end "
          f"{cov['with_upper_end']}: median c at or below it in {cov['upper_holds']}, within both ends in "
          f"{cov['both_hold']}")
    if a.json:
        write_atomically(a.json, {"schema": "xstage.knee_across_calls", "K": sorted(ks), "min_V_bytes": a.min_V,
                                  "calibrations": a.calibrations, "summary": groups, "coverage": cov})
        os.chmod(a.json, 0o644)  # mkstemp's 0600 is no result file's mode
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
