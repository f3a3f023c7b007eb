#!/usr/bin/env python3
"""Markdown tables of a calibration file's interference term (extra.interference, issue 28): the parameters with
their 95% intervals, and the held-out / in-sample errors by regime beside the constant predictors.
Usage: scripts/interference_table.py CALIBRATION.json"""
import json
import sys


def fmt(x, unit=""):
    if x is None:
        return "-"
    if unit == "us":
        return f"{x * 1e6:.4g}"
    if unit == "GB/s":
        return f"{x / 1e9:.4g}"
    return f"{x:.4g}"


UNITS = {"wait_s_at_kref": ("us", "W_ref (us)"), "drain_rate_Bps": ("GB/s", "R seen by the loaded points (GB/s)"),
         "tile_time_s_l2": ("us", "T0, L2 operands (us)"), "tile_time_s_hbm": ("us", "T0, HBM operands (us)")}


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            block = json.load(f)["extra"]["interference"]
    except (OSError, ValueError, KeyError) as e:
        print(f"interference_table.py: {argv[1]}: no interference block ({e})", file=sys.stderr)
        return 2
    print(f"File: `{argv[1]}`. Status: **{block['status']}**" + (f" ({block['why']})" if block["why"] else "") + ".\n")
    print("| parameter | value | 95% interval | constrained | note |")
    print("|---|---|---|---|---|")
    for p in block["parameters"]:
        unit, label = UNITS.get(p["name"], ("", p["name"]))
        lo, hi = p["lo"], p["hi"]
        iv = "-" if lo is None or hi is None or lo == hi else f"[{fmt(lo, unit)}, {fmt(hi, unit)}]"
        print(f"| {label} | {fmt(p['value'], unit)} | {iv} | {'yes' if p['constrained'] else 'no'} | {p['note']} |")
    v = block.get("validation")
    if not v:
        return 0
    print("\n| validation | regime | points | median abs err | p90 abs err | bracket coverage | no term (s=1) median | "
          "constant median |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in ("held_out", "in_sample"):
        for scope, key in (("in scope", "in_scope_by_regime"), ("all", "by_regime")):
            for regime in ("free", "knee", "full"):
                s = v[kind][key][regime]
                pct = lambda x: "-" if x is None else f"{100 * x:.1f}%"
                print(f"| {kind} ({scope}) | {regime} | {s['num_predicted']}/{s['num_points']} | "
                      f"{pct(s['median_abs_rel_err'])} | {pct(s['p90_abs_rel_err'])} | {pct(s['bracket_coverage'])} | "
                      f"{pct(s['no_term_median_abs_rel_err'])} | {pct(s['constant_median_abs_rel_err'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
