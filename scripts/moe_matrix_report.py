#!/usr/bin/env python3
"""Issue 12's matrix report from `xstage-bench megamoe` result files (post-processing; standard library only).

Sections: completeness of the 196 required configurations (7 shapes x {bf16, fp8} x {balanced, skewed} x
T {2048, 6976, 16384} on host K_SM 66 and its local control, host K_SM 132 at T 6976), the paired
interleaved/wave speedup (geomean, median, max, min; the model-flagged subset; regressions beside the local
control), the advisor judged on before-run predictions (after-run ones apart, in-sample), the Table 2
analogue (eq. 15 predicted vs measured staging wait, shape ordering, the dit_moe negative control), the
eq. 14 floor test, D sweeps and clocks. Definitions are written into the JSON beside each number.

Usage: python3 scripts/moe_matrix_report.py RESULT.json [...] --out-json SUMMARY.json --out-md TABLES.md
       [--block-n 128] [--tie 0.02] [--slowdown-bar 0.03] [--stall-bar 0.3] [--floor-tol 0.10]
       [--d-tol 0.02] [--clock-tol 0.03] [--advised-d] [--fail-on-bars]
A later file's point replaces an earlier one for the same configuration when it is at least as good
(status, verification, not throttled): pass re-runs after the first run.
--advised-d: a point run at the D its configuration's before-run advisor recommended (prediction.advisor.D of
the host point; the local control at its host twin's D) fills the matrix slot too, so a re-run at the
advisor's D, passed after the first run, replaces the D-auto point: the advisor judged at its own D.
Exit codes: 0 report written; 1 with --fail-on-bars when the matrix is incomplete or a bar is not met;
2 bad usage or input (nothing written).
"""
import argparse
import json
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from moe_matrix import analysis, markdown, mechanism  # noqa: E402
from moe_matrix.points import (InputError, completeness, get, load_points, select,  # noqa: E402
                               status_of)

_STATE_MARK = {"ok": "ok", "failed": "F", "unverified": "U", "wrong": "W"}


def build_summary(paths, a):
    records = load_points(paths)
    if not records:
        raise InputError("no megamoe point in " + ", ".join(paths) + "; expected `xstage-bench megamoe` results")
    chosen, superseded, extras = select(records, a.block_n, a.advised_d)
    local_recs = [r for s, r in chosen.items() if s[0] == "local" and status_of(r["point"]) == "ok"]
    summary = {"files": list(paths),
               "parameters": {"block_n": a.block_n, "advised_d": a.advised_d, "tie": a.tie, "slowdown_bar": a.slowdown_bar,
                              "stall_bar": a.stall_bar, "floor_tol": a.floor_tol, "d_tol": a.d_tol,
                              "clock_tol": a.clock_tol},
               "completeness": completeness(chosen, superseded, extras),
               "speedup": analysis.speedup_section(chosen),
               "advisor": analysis.advisor_section(chosen, a.tie, a.slowdown_bar),
               "table2": mechanism.table2_section(chosen, a.stall_bar),
               "negative_control": analysis.control_statement(chosen, a.tie),
               "eq14": mechanism.eq14_section(chosen, a.floor_tol, local_recs),
               "dsweep": mechanism.dsweep_section(records, a.d_tol),
               "clocks": analysis.clocks_section(records, {r["src"] for r in chosen.values()}, a.clock_tol)}
    summary["bars"] = {
        "complete_verified_predicted": summary["completeness"]["complete"],
        "zero_wrong_rows": summary["completeness"]["wrong_rows"] == 0,
        "advisor_never_slower_than_bar": summary["advisor"]["before_run"]["bar_ok"],
        "eq15_median_rel_error_within_bar": summary["table2"]["bar_ok"],
        "shape_ordering_preserved": summary["table2"]["ordering_preserved"]}
    summary["readme_lines"] = readme_lines(summary)
    state = {}
    for slot, rec in chosen.items():
        mark = _STATE_MARK[status_of(rec["point"])]
        if mark == "ok" and slot[0] == "host" and get(rec["point"], "prediction", "made") != "before_run":
            mark = "p"
        state[slot] = mark
    return summary, state


def readme_lines(s):
    nm = markdown.NM
    c, sp, adv, t2, e14 = s["completeness"], s["speedup"]["host66"], s["advisor"]["before_run"], s["table2"], s["eq14"]
    lines = [f"Matrix: {c['ok']} of {c['expected']} required configurations measured and verified "
             f"({c['wrong_rows']} wrong rows; {len(c['without_before_run_prediction'])} host points without a "
             f"before-run prediction)."]
    st = sp["all"]
    if st["n"]:
        lines.append(f"Interleaved over expert-wave, host K_SM 66: geomean {markdown.ratio(st['geomean'])}, median "
                     f"{markdown.ratio(st['median'])}, max {markdown.ratio(st['max']['value'])} "
                     f"({st['max']['config']}), min {markdown.ratio(st['min']['value'])} ({st['min']['config']}) "
                     f"over {st['n']} configurations.")
        fl = sp["flagged"]
        keys = ", ".join(fl["key_counts"]) or nm
        lines.append(f"Over the {fl['n']} configurations the model flags as violating the rate bound ({keys}): "
                     f"geomean {markdown.ratio(fl['geomean'])}, median {markdown.ratio(fl['median'])}.")
        regs = sp["regressions"]
        lines.append(f"{len(regs)} configurations regress beyond noise (paired p90 < 1)" +
                     (": " + "; ".join(f"{r['config']} {markdown.band(r['speedup'])}, local control "
                                       f"{markdown.band(r['local_control'])}" for r in regs) if regs else "") +
                     f"; {len(sp['below_one_within_noise'])} more are below 1 within noise.")
    else:
        lines.append(f"Interleaved over expert-wave, host K_SM 66: {nm}.")
    if adv["n"]:
        slow = adv["worst"]["choice_slowdown"]
        worst = (f"at worst {markdown.frac(slow)} slower" if slow >= 0 else
                 f"never slower (at worst {markdown.frac(-slow)} faster)")
        lines.append(f"Advisor, predictions made before the run: the recommended schedule was the faster one at "
                     f"{adv['agree']} of {adv['n']} configurations ({markdown.frac(adv['agree_fraction'])}); its "
                     f"choice was {worst} than the other schedule ({adv['worst']['config']}); speedup error median "
                     f"{markdown.frac(adv['speedup_error_median'])}, p90 {markdown.frac(adv['speedup_error_p90'])}.")
    else:
        lines.append(f"Advisor judged on before-run predictions: {nm}.")
    lines.append(f"eq. 15 vs measured staging wait (Table 2 analogue): median relative error "
                 f"{markdown.num(t2['median_rel_error'], 3)} of the wave-schedule stall (bar 0.3: "
                 f"{ {True: 'met', False: 'not met', None: nm}[t2['bar_ok']] }); shape ordering "
                 f"{ {True: 'preserved', False: 'not preserved', None: nm}[t2['ordering_preserved']] }.")
    cf = e14["before_run"]["confusion"]
    lines.append(f"eq. 14 before the run vs the T_iss0 floor (tol {e14['tol']}): holds and reached "
                 f"{cf['holds_reached']}, holds but not reached {cf['holds_not_reached']}, violated and reached "
                 f"{cf['violated_reached']}, violated and not reached {cf['violated_not_reached']} "
                 f"({e14['before_run']['n']} points).")
    for sw in s["dsweep"]["sweeps"]:
        advised = sw.get("D_advised")
        lines.append(f"D sweep {sw['config']}: stops improving at D = {sw['D_stop']} (eq. 16 D_knee "
                     f"{markdown.num(sw['D_knee'], 2)}; the advisor's D before the run "
                     f"{advised if advised is not None else markdown.NM}); the largest D runs "
                     f"{markdown.ratio(sw['largest_D_over_best'])} "
                     f"of the best time.")
    ck = s["clocks"]
    lines.append(f"Clocks: {len(ck['throttled'])} throttled points, {len(ck['schedule_clock_warnings'])} points whose "
                 f"two schedules ran at clocks more than {s['parameters']['clock_tol'] * 100:g}% apart.")
    return lines


def clean(obj):
    """NaN/inf to null, tuples to lists: JSON numbers stay SI numbers."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    return obj


def write_all(outputs):
    """Write every (path, text) to a temporary file beside it, then rename: no half-written output."""
    temps = []
    try:
        for path, text in outputs:
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".moe_report.")
            with os.fdopen(fd, "w") as f:
                f.write(text)
            temps.append((tmp, path))
        for tmp, path in temps:
            os.replace(tmp, path)
    finally:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", help="megamoe result files (re-runs after first runs)")
    ap.add_argument("--out-json", help="summary JSON (every number with its definition and source)")
    ap.add_argument("--out-md", help="Markdown tables and README summary lines")
    ap.add_argument("--block-n", type=int, default=128, help="b_n of the matrix runs (default 128)")
    ap.add_argument("--tie", type=float, default=0.02, help="advisor 'either' tie band (default 0.02)")
    ap.add_argument("--slowdown-bar", type=float, default=0.03, help="advisor choice slowdown bar (default 0.03)")
    ap.add_argument("--stall-bar", type=float, default=0.3, help="eq. 15 median rel. error bar (default 0.3)")
    ap.add_argument("--floor-tol", type=float, default=0.10, help="eq. 14 'reached the floor' tolerance (0.10)")
    ap.add_argument("--d-tol", type=float, default=0.02, help="D sweep: within this of the best time (0.02)")
    ap.add_argument("--clock-tol", type=float, default=0.03, help="warn: schedules' clocks differ by more (0.03)")
    ap.add_argument("--fail-on-bars", action="store_true", help="exit 1 when incomplete or a bar is not met")
    ap.add_argument("--advised-d", action="store_true",
                    help="a point at the advisor's recommended D fills its matrix slot too (later files win)")
    a = ap.parse_args(argv)
    for name in ("tie", "slowdown_bar", "stall_bar", "floor_tol", "d_tol", "clock_tol"):
        value = getattr(a, name)
        if not (math.isfinite(value) and 0 <= value < 10):
            print(f"moe_matrix_report: --{name.replace('_', '-')} must be a number in [0, 10), got {value}",
                  file=sys.stderr)
            return 2
    if not a.out_json and not a.out_md:
        print("moe_matrix_report: give --out-json SUMMARY.json and/or --out-md TABLES.md", file=sys.stderr)
        return 2
    try:
        summary, state = build_summary(a.results, a)
    except InputError as e:
        print(f"moe_matrix_report: {e}", file=sys.stderr)
        return 2
    outputs = []
    if a.out_json:
        outputs.append((a.out_json, json.dumps(clean(summary), indent=1, allow_nan=False) + "\n"))
    if a.out_md:
        outputs.append((a.out_md, markdown.render(summary, state) + "\n"))
    try:
        write_all(outputs)
    except OSError as e:
        print(f"moe_matrix_report: cannot write {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    for line in summary["readme_lines"]:
        print(line)
    if a.fail_on_bars and not all(v is True for v in summary["bars"].values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
