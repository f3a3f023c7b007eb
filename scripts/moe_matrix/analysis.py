"""Report sections on the kept matrix points: interleaved/wave speedup, regressions, the advisor judged,
and clocks (scripts layer). Mechanism sections (Table 2, eq. 14, D sweep) are in mechanism.py.
"""
from .points import (GROUPS, NEGATIVE_CONTROL, geomean, get, number, quantile, slot_label, status_of)


def speedup_of(p):
    """The same-round paired wave/interleaved ratio {median, p10, p90} (p10/p90 None when not recorded)."""
    s = get(p, "extra", "speedup_interleaved_vs_wave")
    median = number(get(s, "median"))
    if median is None or median <= 0:
        return None
    return {"median": median, "p10": number(get(s, "p10")), "p90": number(get(s, "p90"))}


def flagged(p):
    """(flag, key): the model flags the wave schedule as violating the rate bound (eq. 10 at G_wave).
    prediction.wave_rate_bound_ok == false where recorded; else prediction.wave_stall_per_l2_tile_s > 0
    (eq. 15's wave stall, positive when the span max(T_iss0, V/R) exceeds the L2 cover). (None, None): no
    prediction."""
    ok = get(p, "prediction", "wave_rate_bound_ok")
    if isinstance(ok, bool):
        return (not ok), "wave_rate_bound_ok"
    stall = number(get(p, "prediction", "wave_stall_per_l2_tile_s"))
    if stall is not None:
        return stall > 0, "wave_stall_per_l2_tile_s"
    return None, None


def ok_points(chosen, group):
    """(slot, record, speedup) of the group's kept points that ran, verified, and have a paired speedup."""
    out = []
    for slot, rec in sorted(chosen.items(), key=lambda kv: kv[0]):
        if _group(slot) == group and status_of(rec["point"]) == "ok":
            s = speedup_of(rec["point"])
            if s is not None:
                out.append((slot, rec, s))
    return out


def _group(slot):
    for label, target, k_sm, tokens, _ in GROUPS:
        if slot[0] == target and slot[1] == k_sm and slot[5] in tokens:
            return label
    return None


def summary_stats(rows):
    """n, geomean, median, max, min (with the configuration) of rows [(config, src, value)]."""
    if not rows:
        return {"n": 0, "geomean": None, "median": None, "max": None, "min": None}
    values = [v for _, _, v in rows]
    hi = max(rows, key=lambda r: r[2])
    lo = min(rows, key=lambda r: r[2])
    return {"n": len(rows), "geomean": geomean(values), "median": quantile(values, 0.5),
            "max": {"value": hi[2], "config": hi[0], "src": hi[1]},
            "min": {"value": lo[2], "config": lo[0], "src": lo[1]}}


def control_of(chosen, slot):
    """The local control's speedup beside a host slot (same shape, precision, routing, T and K_SM)."""
    rec = chosen.get(("local",) + tuple(slot[1:]))
    if rec is None or status_of(rec["point"]) != "ok":
        return None
    s = speedup_of(rec["point"])
    return dict(s, src=rec["src"]) if s else None


def speedup_section(chosen):
    out = {"definition": {
        "speedup": "extra.speedup_interleaved_vs_wave.median: the same-round paired median of expert-wave time "
                   "over interleaved time (> 1: interleaved faster)",
        "flagged": "the model flags the wave schedule as violating the rate bound (eq. 10 at G_wave): "
                   "prediction.wave_rate_bound_ok == false where recorded, else "
                   "prediction.wave_stall_per_l2_tile_s > 0",
        "regression": "paired median < 1 and paired p90 < 1 (the whole p10..p90 band below 1); "
                      "'within noise': median < 1 <= p90",
        "points": "kept points with status ok, verification passed and a paired speedup"}}
    for label, _, _, _, _ in GROUPS:
        rows = ok_points(chosen, label)
        group = {"all": summary_stats([(slot_label(s), r["src"], sp["median"]) for s, r, sp in rows])}
        if label.startswith("host"):
            flag_rows, eq14_rows, keys, unknown = [], [], {}, []
            for slot, rec, sp in rows:
                flag, key = flagged(rec["point"])
                if key is None:
                    unknown.append(slot_label(slot))
                    continue
                keys[key] = keys.get(key, 0) + 1
                if flag:
                    flag_rows.append((slot_label(slot), rec["src"], sp["median"]))
                if get(rec["point"], "prediction", "eq14_rate_bound_ok") is False:
                    eq14_rows.append((slot_label(slot), rec["src"], sp["median"]))
            group["flagged"] = summary_stats(flag_rows)
            group["flagged"]["key_counts"] = keys
            group["flagged"]["no_prediction"] = unknown
            group["eq14_violated"] = summary_stats(eq14_rows)
            group["regressions"], group["below_one_within_noise"], group["noise_not_recorded"] = \
                _regressions(chosen, rows)
            group["by"] = breakdown(rows)
        out[label] = group
    out["rows"] = [_speedup_row(chosen, slot, rec, sp) for label, _, _, _, _ in GROUPS
                   for slot, rec, sp in ok_points(chosen, label)]
    return out


def breakdown(rows):
    """Geomean and count of the speedup per shape, precision, routing and T (Fig. 8's grouping)."""
    out = {}
    for axis, idx in (("shape", 2), ("precision", 3), ("routing", 4), ("T", 5)):
        values = {}
        for slot, _, sp in rows:
            values.setdefault(str(slot[idx]), []).append(sp["median"])
        out[axis] = {k: {"n": len(v), "geomean": geomean(v)} for k, v in values.items()}
    return out


def _speedup_row(chosen, slot, rec, sp):
    flag, key = flagged(rec["point"])
    hz, _ = clock_hz(rec["point"])
    row = {"config": slot_label(slot), "src": rec["src"], "speedup": sp, "flagged": flag, "flag_key": key,
           "D": get(rec["point"], "extra", "D"), "sm_clock_hz": {v: hz.get(v) for v in ("expert_wave", "interleaved")},
           "throttled": get(rec["point"], "extra", "clocks", "throttled")}
    if slot[0] == "host":
        row["local_control"] = control_of(chosen, slot)
    return row


def _regressions(chosen, rows):
    beyond, within, unknown = [], [], []
    for slot, rec, sp in rows:
        if sp["median"] >= 1.0:
            continue
        entry = {"config": slot_label(slot), "src": rec["src"], "speedup": sp,
                 "local_control": control_of(chosen, slot)}
        if sp["p90"] is None:
            unknown.append(entry)
        elif sp["p90"] < 1.0:
            beyond.append(entry)
        else:
            within.append(entry)
    return beyond, within, unknown


def judge_advisor(advisor, s, tie):
    """One point: agreement, the advisor's choice against the other schedule, the speedup error."""
    rec = advisor.get("schedule")
    if rec == "interleaved":
        agree = s > 1.0
        slowdown = 1.0 / s - 1.0            # t_interleaved / t_wave - 1
    elif rec == "either":
        agree = 1.0 / (1.0 + tie) <= s <= 1.0 + tie
        slowdown = max(s, 1.0 / s) - 1.0    # either may be taken: the slower one counts
    elif rec == "expert_wave":
        agree = s < 1.0
        slowdown = s - 1.0                  # t_wave / t_interleaved - 1
    else:
        return None
    lo, hi = number(advisor.get("predicted_speedup_low")), number(advisor.get("predicted_speedup_high"))
    err = None
    if lo is not None and hi is not None:
        err = 0.0 if lo <= s <= hi else min(abs(s - lo), abs(s - hi)) / s
    return {"schedule": rec, "agree": agree, "choice_slowdown": slowdown, "speedup_error": err,
            "predicted_low": lo, "predicted_high": hi}


def advisor_section(chosen, tie, slowdown_bar):
    out = {"definition": {
        "agree": "recommended 'interleaved': the paired median speedup > 1; 'expert_wave': < 1; 'either': it lies "
                 f"in the tie band [1/(1+tie), 1+tie], tie = {tie}",
        "choice_slowdown": "time of the advisor's choice over the other schedule's, minus 1: 1/s - 1 for "
                           "'interleaved'; s - 1 for 'expert_wave'; max(s, 1/s) - 1 for 'either' (either may be "
                           "taken, the slower counts)",
        "speedup_error": "0 inside [predicted_speedup_low, predicted_speedup_high], else the distance to the "
                         "nearest bound over the measured speedup",
        "bar": f"choice_slowdown <= {slowdown_bar} on every configuration",
        "points": "kept host points (K_SM 66 and 132) with status ok and a paired speedup; before_run only "
                  "for the judged numbers, after_run apart (in-sample)"}}
    groups = {"before_run": [], "after_run": []}
    not_recorded = []
    for label in ("host66", "host132"):
        for slot, rec, sp in ok_points(chosen, label):
            p = rec["point"]
            advisor, made = get(p, "prediction", "advisor"), get(p, "prediction", "made")
            judged = judge_advisor(advisor, sp["median"], tie) if isinstance(advisor, dict) else None
            if judged is None or made not in groups:
                not_recorded.append({"config": slot_label(slot), "src": rec["src"], "made": made or "not recorded",
                                     "advisor": "recorded" if isinstance(advisor, dict) else "not recorded"})
                continue
            judged.update(config=slot_label(slot), src=rec["src"], measured_speedup=sp["median"],
                          advisor_D=advisor.get("D"), run_D=get(p, "extra", "D"))
            groups[made].append(judged)
    for made, rows in groups.items():
        out[made] = _advisor_summary(rows, slowdown_bar)
    out["not_recorded"] = not_recorded
    return out


def _advisor_summary(rows, slowdown_bar):
    if not rows:
        return {"n": 0, "agree": 0, "agree_fraction": None, "worst": None, "bar_ok": None,
                "speedup_error_median": None, "speedup_error_p90": None, "speedup_error_max": None,
                "disagreements": [], "D_differs": [], "rows": []}
    errors = [r["speedup_error"] for r in rows if r["speedup_error"] is not None]
    worst = max(rows, key=lambda r: r["choice_slowdown"])
    return {"n": len(rows), "agree": sum(r["agree"] for r in rows),
            "agree_fraction": sum(r["agree"] for r in rows) / len(rows),
            "worst": {"choice_slowdown": worst["choice_slowdown"], "config": worst["config"], "src": worst["src"],
                      "schedule": worst["schedule"], "measured_speedup": worst["measured_speedup"]},
            "bar_ok": worst["choice_slowdown"] <= slowdown_bar,
            "over_bar": [r["config"] for r in rows if r["choice_slowdown"] > slowdown_bar],
            "speedup_error_n": len(errors), "speedup_error_median": quantile(errors, 0.5),
            "speedup_error_p90": quantile(errors, 0.9), "speedup_error_max": max(errors) if errors else None,
            "disagreements": [r["config"] for r in rows if not r["agree"]],
            "D_differs": [r["config"] for r in rows if r["advisor_D"] is not None and r["run_D"] is not None
                          and r["advisor_D"] != r["run_D"]],
            "rows": rows}


def clock_hz(p):
    """{variant: hz} and where it came from: extra.clocks.sm_clock_hz, else the instrumented tiles."""
    hz = get(p, "extra", "clocks", "sm_clock_hz")
    if isinstance(hz, dict):
        return {k: number(v) for k, v in hz.items()}, "extra.clocks.sm_clock_hz"
    out = {}
    for name, v in (get(p, "extra", "variants") or {}).items():
        out[name] = number(get(v, "tiles", "sm_clock_hz"))
    return out, "extra.variants.*.tiles.sm_clock_hz"


def clocks_section(records, kept_srcs, tol):
    rows, throttled_rows, warnings = [], [], []
    for rec in records:
        p = rec["point"]
        hz, source = clock_hz(p)
        clocks = get(p, "extra", "clocks") or {}
        t = clocks.get("throttled") if isinstance(clocks.get("throttled"), bool) else None
        ax = p["axes"]
        label = (f"{ax.get('target')} K{ax.get('K_SM')} {ax.get('shape')} {ax.get('precision')} "
                 f"{ax.get('routing')} T{ax.get('T')} D{ax.get('D')} b_n{ax.get('block_n')}")
        row = {"config": label, "src": rec["src"], "kept": rec["src"] in kept_srcs, "sm_clock_hz": hz,
               "clock_from": source, "throttled": t, "reason": clocks.get("reason"),
               "attempts": clocks.get("attempts"),
               "nvml_reasons": get(clocks, "nvml_after", "reasons") or get(clocks, "nvml_before", "reasons")}
        w, i = hz.get("expert_wave"), hz.get("interleaved")
        row["wave_over_interleaved_clock"] = w / i if w and i else None
        rows.append(row)
        if t:
            throttled_rows.append(row)
        if row["wave_over_interleaved_clock"] is not None and abs(row["wave_over_interleaved_clock"] - 1) > tol:
            warnings.append(row)
    all_hz = [v for r in rows for v in r["sm_clock_hz"].values() if v]
    return {"definition": {"warn": f"|clock(expert_wave) / clock(interleaved) - 1| > {tol}",
                           "throttled": "extra.clocks.throttled (null: not recorded)"},
            "points": len(rows), "throttled": throttled_rows, "schedule_clock_warnings": warnings,
            "throttled_not_recorded": sum(r["throttled"] is None for r in rows),
            "min_hz": min(all_hz) if all_hz else None, "max_hz": max(all_hz) if all_hz else None, "rows": rows}


def control_statement(chosen, tie):
    """The DiT-MoE negative control's facts (host K_SM 66): model wave stall, advisor, measured speedup."""
    rows = []
    for slot, rec, sp in ok_points(chosen, "host66"):
        if slot[2] != NEGATIVE_CONTROL:
            continue
        p = rec["point"]
        stall = number(get(p, "prediction", "wave_stall_per_l2_tile_s"))
        rows.append({"config": slot_label(slot), "src": rec["src"], "model_wave_stall_per_l2_tile_s": stall,
                     "advisor": get(p, "prediction", "advisor", "schedule"), "measured_speedup": sp["median"],
                     "within_tie_band": 1.0 / (1.0 + tie) <= sp["median"] <= 1.0 + tie,
                     "local_control": control_of(chosen, slot)})
    return rows

