"""Markdown rendering of the matrix summary (scripts layer). Every number comes from the summary, which
carries the source of each row as "file.json#point"; an absent number prints "not measured".
"""
from .points import GROUPS, PRECISIONS, ROUTINGS, SHAPES

NM = "not measured"


def us(x):
    return NM if x is None else f"{x * 1e6:.2f} µs"


def ms(x):
    return NM if x is None else f"{x * 1e3:.3f} ms"


def ratio(x):
    return NM if x is None else f"{x:.3f}×"


def ghz(x):
    return NM if x is None else f"{x / 1e9:.3f}"


def frac(x):
    return NM if x is None else f"{x * 100:.1f}%"


def num(x, digits=3):
    return NM if x is None else f"{x:.{digits}f}"


def band(s):
    if s is None:
        return NM
    if s.get("p10") is None or s.get("p90") is None:
        return f"{ratio(s['median'])} (p10–p90 {NM})"
    return f"{ratio(s['median'])} ({s['p10']:.3f}–{s['p90']:.3f})"


def stats_line(name, st):
    if not st or st["n"] == 0:
        return f"- {name}: {NM} (0 configurations)"
    return (f"- {name}: geomean {ratio(st['geomean'])}, median {ratio(st['median'])}, "
            f"max {ratio(st['max']['value'])} ({st['max']['config']}, `{st['max']['src']}`), "
            f"min {ratio(st['min']['value'])} ({st['min']['config']}, `{st['min']['src']}`) over {st['n']} configurations")


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def completeness_md(c, chosen_state):
    lines = ["## Completeness", "",
             f"{c['ok']} of {c['expected']} required configurations measured and verified; wrong rows (wrong "
             f"elements + unwritten + unexpected slots, all variants): {c['wrong_rows']}; host points without a "
             f"before-run prediction: {len(c['without_before_run_prediction'])}. Matrix "
             f"{'complete' if c['complete'] else 'INCOMPLETE'}.", ""]
    rows = [[label, g["expected"], g["ok"], len(g["missing"]), len(g["failed"]), len(g["unverified"]),
             len(g["wrong"])] for label, g in c["groups"].items()]
    lines += table(["group", "expected", "ok", "missing", "failed", "unverified", "wrong"], rows) + [""]
    lines += ["Cells: ok, `-` missing, `F` failed, `U` unverified, `W` wrong rows, `p` ok but no before-run "
              "prediction (host).", ""]
    for label, target, k_sm, tokens, required in GROUPS:
        if not required:
            continue
        cols = [(prec, r, t) for prec in PRECISIONS for r in ROUTINGS for t in tokens]
        header = [f"{label}"] + [f"{prec} {r[:4]} {t}" for prec, r, t in cols]
        grid = [[shape] + [chosen_state.get((target, k_sm, shape, prec, r, t), "-") for prec, r, t in cols]
                for shape in SHAPES]
        lines += table(header, grid) + [""]
    for kind in ("failed", "unverified", "wrong"):
        for label, g in c["groups"].items():
            for e in g[kind]:
                extra = e.get("reason") or e.get("detail") or ""
                lines.append(f"- {kind}: {e['config']} (`{e['src']}`) {extra}".rstrip())
    for e in c["without_before_run_prediction"]:
        lines.append(f"- no before-run prediction: {e['config']} (`{e['src']}`, made: {e['made']})")
    if c["superseded"]:
        lines.append("- superseded by a later or better run: " +
                     ", ".join(f"`{s['src']}` by `{s['by']}`" for s in c["superseded"]))
    lines.append(f"- points outside the matrix (D sweep, other b_n, ...): {len(c['outside_matrix'])}")
    return lines + [""]


def speedup_md(sp):
    d = sp["definition"]
    lines = ["## Speedup, interleaved over expert-wave", "", f"Speedup: {d['speedup']}. Flagged: {d['flagged']}. "
             f"Regression: {d['regression']}.", ""]
    names = {"host66": "host K_SM 66 (the matrix)", "local66": "local control K_SM 66",
             "host132": "host K_SM 132, T 6976", "local132": "local control K_SM 132, T 6976"}
    for label, name in names.items():
        g = sp[label]
        lines.append(stats_line(name, g["all"]))
        if "flagged" in g:
            keys = ", ".join(f"{k}: {v}" for k, v in g["flagged"]["key_counts"].items()) or "none"
            lines.append(stats_line(f"{name}, flagged by the model (keys used: {keys})", g["flagged"]))
            lines.append(stats_line(f"{name}, eq. 14 violated (eq14_rate_bound_ok false)", g["eq14_violated"]))
            lines.append(f"- {name}: {len(g['regressions'])} regressions beyond noise, "
                         f"{len(g['below_one_within_noise'])} below 1 within noise, "
                         f"{len(g['noise_not_recorded'])} below 1 with p10/p90 not recorded")
    by = sp["host66"].get("by", {})
    if any(by.values()):
        lines += ["", "host K_SM 66 by axis (geomean, configurations):", ""]
        lines += table(["axis", "value", "geomean", "n"],
                       [[axis, key, ratio(v["geomean"]), v["n"]] for axis, groups in by.items()
                        for key, v in groups.items()])
    lines.append("")
    regs = [(lab, e) for lab in ("host66", "host132") for kind in ("regressions", "below_one_within_noise",
                                                                    "noise_not_recorded") for e in sp[lab][kind]]
    if regs:
        lines += ["Below 1 (host), with the local control beside (a control below 1 too points at wave-boundary "
                  "tails or locality, not the drain):", ""]
        lines += table(["configuration", "speedup (p10–p90)", "local control", "source"],
                       [[e["config"], band(e["speedup"]), band(e["local_control"]), f"`{e['src']}`"]
                        for _, e in regs]) + [""]
    lines += ["Per configuration:", ""]
    lines += table(["configuration", "speedup (p10–p90)", "D", "flagged", "local control",
                    "SM clock wave / int (GHz)", "throttled", "source"],
                   [[r["config"], band(r["speedup"]), r["D"] if r["D"] is not None else NM,
                     {True: "yes", False: "no", None: NM}[r["flagged"]] if "local_control" in r else "",
                     band(r["local_control"]) if "local_control" in r else "",
                     f"{ghz(r['sm_clock_hz']['expert_wave'])} / {ghz(r['sm_clock_hz']['interleaved'])}",
                     {True: "yes", False: "no"}.get(r["throttled"], NM), f"`{r['src']}`"] for r in sp["rows"]])
    return lines + [""]


def advisor_md(a):
    lines = ["## The advisor (`xstage-predict moe`) judged", "", f"Agree: {a['definition']['agree']}. "
             f"Choice slowdown: {a['definition']['choice_slowdown']}. Speedup error: "
             f"{a['definition']['speedup_error']}.", ""]
    for made, name in (("before_run", "before the run (judged)"), ("after_run", "after the run (in-sample)")):
        s = a[made]
        if s["n"] == 0:
            lines.append(f"- {name}: {NM} (0 points)")
            continue
        w = s["worst"]
        worst = (f"{frac(w['choice_slowdown'])} slower" if w["choice_slowdown"] >= 0 else
                 f"never slower (at worst {frac(-w['choice_slowdown'])} faster)")
        lines.append(f"- {name}: recommended schedule was the faster one at {s['agree']} of {s['n']} "
                     f"({frac(s['agree_fraction'])}); worst choice vs the other schedule: {worst} "
                     f"({w['config']}, advisor '{w['schedule']}', measured {ratio(w['measured_speedup'])}, "
                     f"`{w['src']}`; bar ≤ 3%: {'met' if s['bar_ok'] else 'NOT met'}); speedup error median "
                     f"{frac(s['speedup_error_median'])}, p90 {frac(s['speedup_error_p90'])}, max "
                     f"{frac(s['speedup_error_max'])} over {s['speedup_error_n']} points")
        if s["disagreements"]:
            lines.append(f"  - disagreements: {', '.join(s['disagreements'])}")
        if s["D_differs"]:
            lines.append(f"  - ran at a D other than the advisor's: {', '.join(s['D_differs'])}")
    lines.append(f"- not judged (no advisor or `prediction.made` not recorded): {len(a['not_recorded'])}")
    return lines + [""]


def table2_md(t, control):
    lines = ["## Table 2 analogue (skewed, T 6976, host K_SM 66)", "",
             f"Rel. error: {t['definition']['rel_error']}. Bar: {t['definition']['bar']}. "
             f"Ordering: {t['definition']['ordering']}.", ""]
    rows = []
    for r in t["rows"]:
        if not r["measured"]:
            rows.append([r["shape"], r["precision"]] + [NM] * 15 + [f"`{r['src']}`" if r["src"] else NM])
            continue
        w, i = r["expert_wave"], r["interleaved"]
        rows.append([r["shape"], r["precision"], us(w["trs_median_s"]), us(i["trs_median_s"]),
                     us(w["l2_mainloop_median_s"]), us(i["l2_mainloop_median_s"]), us(w["l1_mainloop_median_s"]),
                     us(i["l1_mainloop_median_s"]), us(w["eq15_predicted_per_cta_s"]),
                     us(w["eq15_measured_per_cta_s"]), us(i["eq15_predicted_per_cta_s"]),
                     us(i["eq15_measured_per_cta_s"]), num(w["rel_error_vs_wave_stall"], 2),
                     num(i["rel_error_vs_wave_stall"], 2), us(w.get("excess_over_local_s")),
                     us(i.get("excess_over_local_s")), ratio(r["speedup"]), f"`{r['src']}`"])
    lines += table(["shape", "prec", "T_RS wave", "T_RS int", "L2 ML wave", "L2 ML int", "L1 ML wave", "L1 ML int",
                    "eq.15 pred wave /CTA", "meas wave /CTA", "eq.15 pred int /CTA", "meas int /CTA",
                    "rel err wave", "rel err int", "meas − local wave /CTA", "meas − local int /CTA", "speedup",
                    "source"], rows) + [""]
    bar = {True: "met", False: "NOT met", None: NM}[t["bar_ok"]]
    lines.append(f"- eq. 15 vs measured staging wait: median rel. error {num(t['median_rel_error'], 3)} over "
                 f"{t['n_rel_errors']} values (bar ≤ 0.3: {bar}); median abs. error {us(t['median_abs_error_s'])}")
    if t.get("median_abs_error_vs_excess_s") is not None:
        lines.append(f"- against the measured wait minus the local control's (the slot's fixed cost where nothing "
                     f"drains): median abs. error {us(t['median_abs_error_vs_excess_s'])}, max "
                     f"{us(t['max_abs_error_vs_excess_s'])} per CTA")
    for prec, o in t["ordering"].items():
        state = {True: "preserved", False: "NOT preserved", None: NM}[o["preserved"]]
        disc = f"; discordant: {', '.join('/'.join(p) for p in o['discordant'])}" if o["discordant"] else ""
        lines.append(f"- shape ordering, {prec}, expert-wave: {state} ({o['concordant']} of {o['pairs']} pairs "
                     f"concordant over {o['shapes']} shapes; Spearman {num(o['spearman'], 3)}){disc}")
    if control:
        either = sum(c["advisor"] == "either" for c in control)
        zero = sum(c["model_wave_stall_per_l2_tile_s"] == 0 for c in control)
        tied = sum(c["within_tie_band"] for c in control)
        lines.append(f"- negative control dit_moe, host K_SM 66, all {len(control)} measured configurations: model "
                     f"wave stall 0 at {zero}, advisor 'either' at {either}, measured speedup within the tie band at "
                     f"{tied}; the Table 2 rows:")
    for c in control:
        if "skewed T6976" not in c["config"]:
            continue
        lines.append(f"- negative control {c['config']}: model wave stall per L2 tile "
                     f"{us(c['model_wave_stall_per_l2_tile_s'])}, advisor '{c['advisor'] or NM}', measured "
                     f"{ratio(c['measured_speedup'])} (local control {band(c['local_control'])}), "
                     f"`{c['src']}`")
    if not control:
        lines.append(f"- negative control (dit_moe, host K_SM 66): {NM}")
    return lines + [""]


def eq14_md(e):
    lines = ["## eq. 14: verdict before the run vs the backpressure-free floor", "",
             f"Floor: {e['definition']['floor']}. Reached: {e['definition']['reached']}. "
             f"Local floor: {e['definition']['local_floor']}.", ""]
    for made, name in (("before_run", "before the run"), ("after_run", "after the run (in-sample)")):
        s = e[made]
        c, cl = s["confusion"], s["confusion_local_floor"]
        lines += [f"{name}: {s['n']} points", ""]
        lines += table(["eq. 14 verdict", "reached T_iss0 floor", "not reached", "reached local floor",
                        "not reached (local)"],
                       [["holds", c["holds_reached"], c["holds_not_reached"], cl["holds_reached"],
                         cl["holds_not_reached"]],
                        ["violated", c["violated_reached"], c["violated_not_reached"], cl["violated_reached"],
                         cl["violated_not_reached"]]]) + [""]
    sc = e["local_schedule_trs_scatter"]
    lines.append(f"- tolerance {e['tol']}: local-control schedule scatter of median T_RS median "
                 f"{frac(sc['median'])}, max {frac(sc['max'])} over {sc['n']} points"
                 + (" — tol is BELOW the observed noise" if sc["tol_below_max"] else ""))
    lines.append(f"- not tested (no verdict, floor, T_RS or `made`): {len(e['not_recorded'])}")
    return lines + [""]


def dsweep_md(d):
    lines = ["## D sweep (interleaved)", "", f"D_stop: {d['definition']['D_stop']}. "
             f"D_default: {d['definition']['D_default']}.", ""]
    if not d["sweeps"]:
        return lines + [f"{NM}: no points differing only in D.", ""]
    for s in d["sweeps"]:
        lines += [f"**{s['config']}**: D_stop {s['D_stop']} vs eq. 16 D_knee {num(s['D_knee'], 2)} "
                  f"(default D {s['D_default'] if s['D_default'] is not None else NM}; advisor's D before the run "
                  f"{s.get('D_advised') if s.get('D_advised') is not None else NM}); best D {s['best_D']} "
                  f"({ms(s['best_time_s'])}); largest D over best {ratio(s['largest_D_over_best'])}", ""]
        lines += table(["D", "time (p10–p90)", "T_RS median", "L2 spin per CTA", "L2 spin p90", "source"],
                       [[r["D"], f"{ms(r['time_median_s'])} ({ms(r['time_p10_s'])}–{ms(r['time_p90_s'])})",
                         us(r["trs_median_s"]), us(r["l2_spin_per_cta_s"]), us(r["l2_spin_p90_s"]),
                         f"`{r['src']}`"] for r in s["rows"]]) + [""]
    return lines


def clocks_md(c):
    lines = ["## Clocks", "", f"{c['points']} points; SM clock {num(c['min_hz'] and c['min_hz'] / 1e9, 3)}–"
             f"{num(c['max_hz'] and c['max_hz'] / 1e9, 3)} GHz; throttled not recorded at "
             f"{c['throttled_not_recorded']}.", ""]
    for r in c["throttled"]:
        lines.append(f"- throttled: {r['config']} (`{r['src']}`{'' if r['kept'] else ', superseded'}): "
                     f"{r['reason'] or NM}, attempts {r['attempts'] if r['attempts'] is not None else NM}"
                     + (f", NVML reasons {', '.join(r['nvml_reasons'])}" if r["nvml_reasons"] else ""))
    for r in c["schedule_clock_warnings"]:
        lines.append(f"- WARNING schedules at different clocks: {r['config']} (`{r['src']}`): expert-wave / "
                     f"interleaved clock {ratio(r['wave_over_interleaved_clock'])}")
    if not c["throttled"] and not c["schedule_clock_warnings"]:
        lines.append("- no throttled point, no schedule clock mismatch")
    return lines + [""]


def render(summary, chosen_state):
    lines = ["# MegaMoE matrix report", "",
             "Written by `scripts/moe_matrix_report.py` from: " + ", ".join(f"`{f}`" for f in summary["files"]) +
             ". Sources are `file.json#point-index`.", ""]
    lines += ["## Summary lines", "", "Quotable; each number is traced to its point in the sections below.", ""]
    lines += [f"- {s}" for s in summary["readme_lines"]] + [""]
    lines += completeness_md(summary["completeness"], chosen_state)
    lines += speedup_md(summary["speedup"])
    lines += advisor_md(summary["advisor"])
    lines += table2_md(summary["table2"], summary["negative_control"])
    lines += eq14_md(summary["eq14"])
    lines += dsweep_md(summary["dsweep"])
    lines += clocks_md(summary["clocks"])
    return "\n".join(lines)
