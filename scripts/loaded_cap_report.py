#!/usr/bin/env python3
"""Post-processing of loaded-suite result files (remote_store.loaded, docs/interference-calibration.md): which
points' storers reached the burst cap (num_bursts per CTA and launch) before the mainloop ended, so that part of
each CTA's tiles ran without stores and tile_time_s mixes loaded and unloaded tiles.

Per point and repetition it prints the mean bursts per CTA (bytes_issued / (K B)) against the cap, the time the
mainloop ran on after the last store (mainloop_span_s - store_span_s), and an ESTIMATE of the mean loaded tile:
store_span_s / (tiles_per_cta - unloaded time / baseline tile time). The estimate assumes that the CTAs ran
aligned and that the tiles after the stores ran at the baseline's speed, and it counts the launch's non-tile time
(CTA start skew, cold first tiles) as tile time; it is printed only where store_span_s exceeds 10 x tiles_per_cta
x the baseline tile, so that this time is a small part of it.

Usage: scripts/loaded_cap_report.py calibration-loaded-host.json [...]   (--json: one object per point)
Exit codes: 0 ok, 2 bad usage or input (one line on stderr: the file, the problem and the accepted form).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_input import problem_text  # noqa: E402


def point_rows(doc):
    """Yields one dict per measured loaded point of a result document."""
    for p in doc.get("points", []):
        spec, m = p.get("spec", {}), p.get("loaded")
        if p.get("skipped") or spec.get("suite") != "loaded" or not m:
            continue
        k, b, cap = spec["K"], spec["B_bytes"], spec["num_bursts"]
        tiles = spec["loaded"]["tiles_per_cta"]
        base = m["baseline_tile_time_s"]["median"]
        reps = []
        for issued, store, span in zip(m["bytes_issued"]["samples"], m["store_span_s"]["samples"],
                                       m["mainloop_span_s"]["samples"]):
            unloaded_s = max(0.0, span - store)
            loaded_tiles = tiles - unloaded_s / base
            long_enough = store > 10 * tiles * base and loaded_tiles >= 1
            reps.append({
                "bursts_per_cta": issued / (k * b),
                "at_cap": issued >= k * cap * b,  # every CTA issued all its bursts
                "unloaded_s": unloaded_s,
                "mean_loaded_tile_s_estimate": store / loaded_tiles if long_enough else None,
            })
        yield {
            "id": p.get("id", ""), "target": spec.get("target", ""), "mainloop": spec["loaded"]["mainloop"],
            "working_set": spec["loaded"]["working_set"], "address_mode": spec.get("address_mode", ""),
            "K": k, "B_bytes": b, "G_s": spec["G_s"], "cap": cap, "tiles_per_cta": tiles,
            "baseline_tile_s": base, "tile_s": m["tile_time_s"]["median"], "slowdown": m["slowdown"]["median"],
            "repetitions": reps,
        }


ACCEPTED = ("expected an xstage result JSON whose loaded points have spec {K, B_bytes, num_bursts, G_s, loaded "
            "{tiles_per_cta, mainloop, working_set}} and loaded {baseline_tile_time_s, tile_time_s, slowdown, "
            "bytes_issued, store_span_s, mainloop_span_s}")




def table_lines(path, rows):
    lines = [f"{path}\n  {'target':<6} {'mainloop':<11} {'ws':<3} {'pattern':<9} {'K':>4} {'B':>6} {'G us':>6} "
             f"{'slowdown':>8}  reps at cap  bursts/CTA (cap)       unloaded ms   est. loaded tile / baseline"]
    for row in rows:
        reps = row["repetitions"]
        capped = sum(r["at_cap"] for r in reps)
        bursts = ", ".join(f"{r['bursts_per_cta']:.0f}" for r in reps)
        unloaded = ", ".join(f"{1e3 * r['unloaded_s']:.2f}" for r in reps)
        est = ", ".join("-" if r["mean_loaded_tile_s_estimate"] is None
                        else f"{r['mean_loaded_tile_s_estimate'] / row['baseline_tile_s']:.0f}x" for r in reps)
        lines.append(f"  {row['target']:<6} {row['mainloop']:<11} {row['working_set']:<3} {row['address_mode']:<9} "
                     f"{row['K']:>4} {row['B_bytes'] // 1024:>5}K {1e6 * row['G_s']:>6.1f} {row['slowdown']:>8.2f}  "
                     f"{capped}/{len(reps):<9} {bursts} ({row['cap']})  {unloaded}  {est}")
    return lines


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json", action="store_true", help="one JSON object per point instead of the table")
    args = ap.parse_args(argv)
    lines = []  # printed once every file has been read: a malformed file prints no partial table
    for path in args.files:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"loaded_cap_report: cannot read {path}: {e} (expected an xstage result JSON)", file=sys.stderr)
            return 2
        try:
            if not isinstance(doc, dict) or not isinstance(doc.get("points", []), list):
                raise TypeError("the file is not an object with a points array")
            rows = list(point_rows(doc))
            lines += [json.dumps(row) for row in rows] if args.json else table_lines(path, rows)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError) as e:
            print(f"loaded_cap_report: {path}: {problem_text(e)} ({ACCEPTED})", file=sys.stderr)
            return 2
    if lines:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
