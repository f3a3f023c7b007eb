"""Report sections on the mechanism: the Table 2 analogue (eq. 15), the eq. 14 floor test and the D sweep
(scripts layer).
"""
import json
import math

from .points import (NEGATIVE_CONTROL, PRECISIONS, SHAPES, get, number, quantile, slot_label, status_of)

SCHEDULES = ("expert_wave", "interleaved")


def tile(p, variant, key):
    return number(get(p, "extra", "variants", variant, "tiles", key))


def table2_section(chosen, rel_bar):
    """Skewed, T 6976, host K_SM 66, every shape and precision: T_RS, mainloops, eq. 15 per CTA."""
    rows = []
    for shape in SHAPES:
        for prec in PRECISIONS:
            slot = ("host", 66, shape, prec, "skewed", 6976)
            rec = chosen.get(slot)
            row = {"config": slot_label(slot), "shape": shape, "precision": prec,
                   "src": rec["src"] if rec else None, "measured": False}
            if rec is not None and status_of(rec["point"]) == "ok":
                p = rec["point"]
                row["measured"] = True
                row["speedup"] = number(get(p, "extra", "speedup_interleaved_vs_wave", "median"))
                for v in SCHEDULES:
                    row[v] = {"trs_median_s": tile(p, v, "l2_store_span_median_s"),
                              "trs_p90_s": tile(p, v, "l2_store_span_p90_s"),
                              "l2_mainloop_median_s": tile(p, v, "l2_mainloop_median_s"),
                              "l1_mainloop_median_s": tile(p, v, "l1_mainloop_median_s"),
                              "eq15_predicted_per_cta_s": tile(p, v, "eq15_predicted_stall_per_cta_s"),
                              "eq15_measured_per_cta_s": tile(p, v, "eq15_measured_wait_per_cta_s")}
                wave_meas = row["expert_wave"]["eq15_measured_per_cta_s"]
                # The local control's wait per CTA is the staging slot's fixed cost where nothing drains:
                # host - local is the part the remote path adds.
                local = chosen.get(("local",) + slot[1:])
                local_ok = local is not None and status_of(local["point"]) == "ok"
                for v in SCHEDULES:
                    pred, meas = row[v]["eq15_predicted_per_cta_s"], row[v]["eq15_measured_per_cta_s"]
                    err = abs(pred - meas) if pred is not None and meas is not None else None
                    row[v]["abs_error_s"] = err
                    row[v]["rel_error_vs_wave_stall"] = err / wave_meas if err is not None and wave_meas else None
                    lm = tile(local["point"], v, "eq15_measured_wait_per_cta_s") if local_ok else None
                    row[v]["local_measured_per_cta_s"] = lm
                    row[v]["excess_over_local_s"] = meas - lm if meas is not None and lm is not None else None
                    ex = row[v]["excess_over_local_s"]
                    row[v]["abs_error_vs_excess_s"] = abs(pred - ex) if pred is not None and ex is not None else None
            rows.append(row)
    rel = [r[v]["rel_error_vs_wave_stall"] for r in rows if r["measured"] and r["shape"] != NEGATIVE_CONTROL
           for v in SCHEDULES if r[v]["rel_error_vs_wave_stall"] is not None]
    abs_err = [r[v]["abs_error_s"] for r in rows if r["measured"] and r["shape"] != NEGATIVE_CONTROL
               for v in SCHEDULES if r[v]["abs_error_s"] is not None]
    median_rel = quantile(rel, 0.5)
    abs_excess = [r[v]["abs_error_vs_excess_s"] for r in rows if r["measured"] and r["shape"] != NEGATIVE_CONTROL
                  for v in SCHEDULES if r[v].get("abs_error_vs_excess_s") is not None]
    ordering = {prec: shape_ordering([r for r in rows if r["measured"] and r["precision"] == prec])
                for prec in PRECISIONS}
    preserved = [o["preserved"] for o in ordering.values() if o["preserved"] is not None]
    return {"definition": {
        "rows": "kept host K_SM 66 points, skewed routing, T 6976, status ok",
        "rel_error": "|eq15_predicted_stall_per_cta_s - eq15_measured_wait_per_cta_s| of a schedule over the "
                     "same row's measured expert-wave wait per CTA",
        "bar": f"median rel_error over the non-control rows (dit_moe excluded), both schedules, <= {rel_bar}",
        "ordering": "per precision, expert-wave schedule, every shape: a pair of shapes is concordant when "
                    "predicted and measured stalls order it the same way; pairs with equal predictions are "
                    "skipped; preserved = every counted pair concordant. Spearman rho beside (mid-ranks)"},
        "excess_over_local": "a schedule's measured wait per CTA on host minus the local control's (the staging "
                             "slot's fixed cost where nothing drains); abs_error_vs_excess = |predicted - excess|",
        "rows": rows, "median_rel_error": median_rel, "n_rel_errors": len(rel),
        "median_abs_error_s": quantile(abs_err, 0.5),
        "median_abs_error_vs_excess_s": quantile(abs_excess, 0.5),
        "max_abs_error_vs_excess_s": max(abs_excess) if abs_excess else None,
        "bar_ok": (median_rel <= rel_bar) if median_rel is not None else None,
        "ordering": ordering, "ordering_preserved": all(preserved) if preserved else None}


def _ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1
        i = j + 1
    return ranks


def spearman(xs, ys):
    if len(xs) < 2:
        return None
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def shape_ordering(rows):
    pts = [(r["shape"], r["expert_wave"]["eq15_predicted_per_cta_s"], r["expert_wave"]["eq15_measured_per_cta_s"])
           for r in rows]
    pts = [t for t in pts if t[1] is not None and t[2] is not None]
    counted, concordant, discordant = 0, 0, []
    for i in range(len(pts)):
        for j in range(i + 1, len(pts)):
            dp, dm = pts[i][1] - pts[j][1], pts[i][2] - pts[j][2]
            if dp == 0:
                continue
            counted += 1
            if dp * dm > 0:
                concordant += 1
            else:
                discordant.append([pts[i][0], pts[j][0]])
    return {"shapes": len(pts), "pairs": counted, "concordant": concordant, "discordant": discordant,
            "preserved": (concordant == counted) if counted else None,
            "spearman": spearman([t[1] for t in pts], [t[2] for t in pts])}


def eq14_section(chosen, tol, local_scatter_rows):
    """eq. 14 verdict before the run vs whether the interleaved median T_RS reached the floor T_iss0."""
    out = {"definition": {
        "floor": "prediction.tiss0_s (T_iss0 of the calibration at K_SM producers and V = K_SM V_t)",
        "reached": f"interleaved median T_RS (l2_store_span_median_s) <= floor x (1 + tol), tol = {tol}",
        "local_floor": "the same test against the local control's interleaved median T_RS (never drain-bound)",
        "points": "kept host points (K_SM 66 and 132), status ok, with eq14_rate_bound_ok recorded"},
        "tol": tol}
    groups = {"before_run": [], "after_run": []}
    not_recorded = []
    for slot, rec in sorted(chosen.items(), key=lambda kv: kv[0]):
        p = rec["point"]
        if slot[0] != "host" or status_of(p) != "ok":
            continue
        verdict, floor = get(p, "prediction", "eq14_rate_bound_ok"), number(get(p, "prediction", "tiss0_s"))
        trs = tile(p, "interleaved", "l2_store_span_median_s")
        made = get(p, "prediction", "made")
        if not isinstance(verdict, bool) or floor is None or trs is None or made not in groups:
            not_recorded.append({"config": slot_label(slot), "src": rec["src"], "made": made or "not recorded"})
            continue
        local = chosen.get(("local",) + tuple(slot[1:]))
        local_trs = tile(local["point"], "interleaved", "l2_store_span_median_s") \
            if local is not None and status_of(local["point"]) == "ok" else None
        groups[made].append({"config": slot_label(slot), "src": rec["src"], "eq14_holds": verdict,
                             "floor_s": floor, "trs_interleaved_s": trs, "trs_over_floor": trs / floor,
                             "reached": trs <= floor * (1 + tol), "local_trs_s": local_trs,
                             "reached_local": (trs <= local_trs * (1 + tol)) if local_trs else None})
    for made, rows in groups.items():
        out[made] = {"n": len(rows), "confusion": _confusion(rows, "reached"),
                     "confusion_local_floor": _confusion([r for r in rows if r["reached_local"] is not None],
                                                         "reached_local"),
                     "rows": rows}
    out["not_recorded"] = not_recorded
    scatter = [abs(tile(rec["point"], "interleaved", "l2_store_span_median_s") /
                   tile(rec["point"], "expert_wave", "l2_store_span_median_s") - 1)
               for rec in local_scatter_rows
               if tile(rec["point"], "interleaved", "l2_store_span_median_s") and
               tile(rec["point"], "expert_wave", "l2_store_span_median_s")]
    out["local_schedule_trs_scatter"] = {
        "definition": "|interleaved / expert-wave median T_RS - 1| on the local controls (no drain: the two "
                      "schedules' spans differ only by noise); tol below its max calls noise 'not reached'",
        "n": len(scatter), "median": quantile(scatter, 0.5), "max": max(scatter) if scatter else None,
        "tol_below_max": (tol < max(scatter)) if scatter else None}
    return out


def _confusion(rows, key):
    return {"holds_reached": sum(r["eq14_holds"] and r[key] for r in rows),
            "holds_not_reached": sum(r["eq14_holds"] and not r[key] for r in rows),
            "violated_reached": sum((not r["eq14_holds"]) and r[key] for r in rows),
            "violated_not_reached": sum((not r["eq14_holds"]) and not r[key] for r in rows)}


def effective_d(p):
    for keys in (("extra", "variants", "interleaved", "D"), ("extra", "D"), ("axes", "D")):
        d = get(p, *keys)
        if isinstance(d, int) and not isinstance(d, bool) and d > 0:
            return d
    return None


def dsweep_section(records, d_tol):
    """Groups of status-ok points that differ only in D (the D the interleaved variant ran at)."""
    groups = {}
    for rec in records:
        p = rec["point"]
        d = effective_d(p)
        if status_of(p) != "ok" or d is None or number(get(p, "variants", "interleaved", "median")) is None:
            continue
        key = json.dumps({k: v for k, v in p["axes"].items() if k != "D"}, sort_keys=True)
        per_d = groups.setdefault(key, {})
        old = per_d.get(d)
        # One point per D: an explicit --D run over the auto one, else the later.
        if old is None or not (old["point"]["axes"].get("D", 0) > 0 and p["axes"].get("D", 0) == 0):
            per_d[d] = rec
    out = []
    for key, per_d in groups.items():
        if len(per_d) < 3:  # a sweep, not a matrix point beside one re-run at another D
            continue
        ax = json.loads(key)
        rows = []
        for d in sorted(per_d):
            p = per_d[d]["point"]
            t = get(p, "variants", "interleaved")
            rows.append({"D": d, "src": per_d[d]["src"], "time_median_s": number(t.get("median")),
                         "time_p10_s": number(t.get("p10")), "time_p90_s": number(t.get("p90")),
                         "trs_median_s": tile(p, "interleaved", "l2_store_span_median_s"),
                         "l2_spin_per_cta_s": tile(p, "interleaved", "l2_spin_per_cta_s"),
                         "l2_spin_median_s": tile(p, "interleaved", "l2_spin_median_s"),
                         "l2_spin_p90_s": tile(p, "interleaved", "l2_spin_p90_s")})
        best = min(r["time_median_s"] for r in rows)
        stop = next(r["D"] for r in rows if r["time_median_s"] <= best * (1 + d_tol))
        knees = [number(get(per_d[d]["point"], "prediction", "D_knee")) for d in per_d]
        knee = next((k for k in knees if k is not None), None)
        # The before-run advisor's D (its schedule replay where the build has one), never fitted to the sweep.
        advised = [get(per_d[d]["point"], "prediction", "advisor", "D") for d in per_d
                   if get(per_d[d]["point"], "prediction", "made") == "before_run"]
        advised = next((x for x in advised if isinstance(x, int)), None)
        out.append({"config": f"{ax.get('target')} K{ax.get('K_SM')} {ax.get('shape')} {ax.get('precision')} "
                              f"{ax.get('routing')} T{ax.get('T')} b_n{ax.get('block_n')}",
                    "K_SM": ax.get("K_SM"), "precision": ax.get("precision"), "rows": rows,
                    "best_time_s": best, "best_D": next(r["D"] for r in rows if r["time_median_s"] == best),
                    "D_stop": stop, "D_knee": knee,
                    "D_default": max(1, math.ceil(knee)) if knee is not None else None,
                    "D_advised": advised,
                    "largest_D_over_best": rows[-1]["time_median_s"] / best})
    return {"definition": {"D_stop": f"smallest D whose interleaved median time <= best x (1 + {d_tol})",
                           "D_default": "max(1, ceil(D_knee)), eq. 16 (prediction.D_knee)",
                           "D_advised": "prediction.advisor.D made before the run (the advisor's schedule replay "
                                        "where the build has one; eq. 16's D before it)",
                           "largest_D_over_best": "time at the largest D over the best: locality erosion "
                                                  "shows as > 1 (the time trend; no L2 hit-rate counter)"},
            "sweeps": sorted(out, key=lambda s: s["config"])}
