#!/usr/bin/env python3
"""Judge `xstage-predict moe` against measured megamoe points (issue 12's advisor check).

For every measured point (status ok) whose target is the calibration's, runs the advisor as it would run
before the point existed: the same shape, precision, routing, T, P, K_SM and b_n, the calibration file and
a given tensor throughput (--tflops-bf16 / --tflops-fp8; never the point's own measurements). Then compares:
  - schedule: the advisor's recommended schedule against the faster one measured (same-round median s of
    expert-wave / interleaved). "interleaved" agrees when s > 1; "either" when s lies in [1/(1+tie), 1+tie]
    (--tie, 2%). The choice's slowdown against the other schedule: 1/s - 1 for "interleaved", max(s, 1/s) - 1
    for "either" (either may be taken); the bar (--slowdown-bar, 3%) holds when no point exceeds it.
  - speedup: the advisor's fluid wave/interleaved speedup (or its bracket when Q is not identified) against
    the measured one; the error is 0 inside the bracket, else the distance to the nearest bound over the
    measured speedup.
The definitions are those of scripts/moe_matrix_report.py (moe_matrix/analysis.py judge_advisor).
Prints a table and a JSON summary (fraction agreeing, worst choice slowdown, median and p90 speedup error,
linear-interpolated quantiles); --out writes the JSON.
Usage: python3 scripts/judge_moe_advisor.py RESULT.json [...] --model CAL.json --tflops-bf16 650
       [--tflops-fp8 1300] [--predict build/bin/xstage-predict] [--out judge.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from moe_matrix.analysis import judge_advisor  # noqa: E402
from moe_matrix.points import quantile  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--model", required=True)
    ap.add_argument("--tflops-bf16", type=float, required=True)
    ap.add_argument("--tflops-fp8", type=float, default=None)
    ap.add_argument("--predict", default=None, help="xstage-predict binary (default build/bin or build-host/bin)")
    ap.add_argument("--tie", type=float, default=0.02)
    ap.add_argument("--slowdown-bar", type=float, default=0.03)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    predict = a.predict
    if predict is None:
        for d in ("build", "build-host"):
            cand = os.path.join(here, "..", d, "bin", "xstage-predict")
            if os.path.exists(cand):
                predict = cand
                break
    if predict is None or not os.path.exists(predict):
        print("judge_moe_advisor: xstage-predict not found (build it or pass --predict)", file=sys.stderr)
        return 2
    with open(a.model) as f:
        cal_target = json.load(f).get("config", {}).get("target", "")
    rows = []
    for path in a.results:
        with open(path) as f:
            doc = json.load(f)
        for p in doc.get("points", []):
            if p.get("suite") != "megamoe" or p.get("status") != "ok":
                continue
            ax = p["axes"]
            if cal_target and ax["target"] != cal_target:
                continue
            tflops = a.tflops_bf16 if ax["precision"] == "bf16" else a.tflops_fp8
            if tflops is None:
                continue
            cmd = [predict, "moe", "--model", a.model, "--hidden", str(ax["hidden"]), "--intermediate",
                   str(ax["intermediate"]), "--experts", str(ax["experts"]), "--top-k", str(ax["top_k"]),
                   "--T", str(ax["T"]), "--P", str(ax["P"]), "--ksm", str(ax["K_SM"]), "--precision", ax["precision"],
                   "--block-n", str(ax["block_n"]), "--routing", ax["routing"], "--alpha", str(ax["zipf_alpha"]),
                   "--gain", str(ax["gain"]), "--routing-seed", str(ax["routing_seed"]), "--tensor-tflops", str(tflops),
                   "--json"]
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                print(f"judge_moe_advisor: xstage-predict failed for {ax}: {run.stderr.strip()}", file=sys.stderr)
                return 3
            pred = json.loads(run.stdout)
            measured = p["extra"]["speedup_interleaved_vs_wave"]["median"]
            faster = "interleaved" if measured > 1.0 else "expert_wave"
            rec = pred["recommended_schedule"]
            lo = pred.get("fluid_speedup", pred.get("fluid_speedup_min"))
            hi = pred.get("fluid_speedup", pred.get("fluid_speedup_max"))
            judged = judge_advisor({"schedule": rec, "predicted_speedup_low": lo, "predicted_speedup_high": hi},
                                   measured, a.tie)
            if judged is None:
                print(f"judge_moe_advisor: unknown recommended_schedule '{rec}'", file=sys.stderr)
                return 2
            agree, err = judged["agree"], judged["speedup_error"]
            rows.append({"file": os.path.basename(path), "shape": ax["shape"], "precision": ax["precision"],
                         "K_SM": ax["K_SM"], "block_n": ax["block_n"], "T": ax["T"], "routing": ax["routing"],
                         "recommended": rec, "recommended_D": pred["recommended_D"], "measured_faster": faster,
                         "measured_speedup": measured, "predicted_speedup_min": lo, "predicted_speedup_max": hi,
                         "agree": agree, "choice_slowdown": judged["choice_slowdown"], "speedup_error": err})
    if not rows:
        print("judge_moe_advisor: no measured point on the calibration's target with a given throughput",
              file=sys.stderr)
        return 2
    errors = [r["speedup_error"] for r in rows]
    worst = max(rows, key=lambda r: r["choice_slowdown"])
    summary = {"points": len(rows), "agree_fraction": sum(r["agree"] for r in rows) / len(rows),
               "worst_choice_slowdown": worst["choice_slowdown"],
               "worst_choice_point": f"{worst['shape']} {worst['precision']} K{worst['K_SM']} b_n{worst['block_n']} "
                                     f"T{worst['T']} {worst['routing']}",
               "slowdown_bar": a.slowdown_bar, "slowdown_bar_ok": worst["choice_slowdown"] <= a.slowdown_bar,
               "tie": a.tie,
               "speedup_error_median": statistics.median(errors), "speedup_error_p90": quantile(errors, 0.9),
               "speedup_error_note": "0 inside the predicted bracket, else the distance to its nearest bound over "
                                     "the measured speedup: a wide bracket scores 0. Not xstage-predict moe-score's "
                                     "abs_error (|predicted point / measured - 1|), which is the comparable figure",
               "model": a.model, "tflops_bf16": a.tflops_bf16, "tflops_fp8": a.tflops_fp8, "rows": rows}
    print(f"{'shape':<12} {'prec':<5} {'K_SM':>4} {'b_n':>4} {'rec':<12} {'faster':<12} {'measured':>8} "
          f"{'predicted':>15} {'err':>6}")
    for r in rows:
        print(f"{r['shape']:<12} {r['precision']:<5} {r['K_SM']:>4} {r['block_n']:>4} {r['recommended']:<12} "
              f"{r['measured_faster']:<12} {r['measured_speedup']:>8.3f} "
              f"{r['predicted_speedup_min']:>7.3f}-{r['predicted_speedup_max']:<7.3f} {r['speedup_error']:>6.3f}")
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
