#!/usr/bin/env python3
"""Markdown tables of a calibration file's interference term (extra.interference, issue 28): the parameters with
their 95% intervals, and the held-out / in-sample errors by regime beside the constant predictors.
Usage: scripts/interference_table.py CALIBRATION.json
Exit codes: 0 ok, 2 bad usage or input (one line on stderr: the file, the problem and the accepted form)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_input import problem_text  # noqa: E402


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


ACCEPTED = ("expected a calibration file of xstage-calibrate with extra.interference: status, why, parameters "
            "[{name, value, lo, hi, constrained, note}] and optional validation")




def tables(path, block):
    """The Markdown lines of one interference block; raises KeyError/TypeError/ValueError on a malformed one."""
    lines = [f"File: `{path}`. Status: **{block['status']}**" + (f" ({block['why']})" if block["why"] else "") + ".\n",
             "| parameter | value | 95% interval | constrained | note |", "|---|---|---|---|---|"]
    for p in block["parameters"]:
        unit, label = UNITS.get(p["name"], ("", p["name"]))
        lo, hi = p["lo"], p["hi"]
        iv = "-" if lo is None or hi is None or lo == hi else f"[{fmt(lo, unit)}, {fmt(hi, unit)}]"
        lines.append(f"| {label} | {fmt(p['value'], unit)} | {iv} | {'yes' if p['constrained'] else 'no'} | {p['note']} |")
    v = block.get("validation")
    if not v:
        return lines
    lines += ["\n| validation | regime | points | median abs err | p90 abs err | bracket coverage | no term (s=1) median | "
              "constant median |", "|---|---|---|---|---|---|---|---|"]
    pct = lambda x: "-" if x is None else f"{100 * x:.1f}%"
    for kind in ("held_out", "in_sample"):
        for scope, key in (("in scope", "in_scope_by_regime"), ("all", "by_regime")):
            for regime in ("free", "knee", "full"):
                s = v[kind][key][regime]
                lines.append(f"| {kind} ({scope}) | {regime} | {s['num_predicted']}/{s['num_points']} | "
                             f"{pct(s['median_abs_rel_err'])} | {pct(s['p90_abs_rel_err'])} | {pct(s['bracket_coverage'])} | "
                             f"{pct(s['no_term_median_abs_rel_err'])} | {pct(s['constant_median_abs_rel_err'])} |")
    return lines


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = argv[1]
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        print(f"interference_table.py: {path}: cannot read ({e.strerror}) ({ACCEPTED})", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"interference_table.py: {path}: {problem_text(e)} ({ACCEPTED})", file=sys.stderr)
        return 2
    try:
        if not isinstance(doc, dict) or not isinstance(doc.get("extra"), dict) or "interference" not in doc["extra"]:
            raise KeyError("extra.interference")
        lines = tables(path, doc["extra"]["interference"])
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        print(f"interference_table.py: {path}: {problem_text(e)} ({ACCEPTED})", file=sys.stderr)
        return 2
    print("\n".join(lines))  # only once the whole file read: a malformed one prints no partial table
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
